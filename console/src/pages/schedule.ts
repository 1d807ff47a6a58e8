import dayjs from "dayjs";
import timezone from "dayjs/plugin/timezone";
import utc from "dayjs/plugin/utc";

dayjs.extend(utc);
dayjs.extend(timezone);

/** "2026-11-21T10:00" (a datetime-local value) as wall time in `zone` → ISO 8601 UTC. */
export function scheduledAtUtc(local: string, zone: string): string {
  return dayjs.tz(local, zone).utc().toISOString();
}

/** A datetime-local value for `minutes` from now in `zone`. */
export function localInputIn(zone: string, minutes: number): string {
  return dayjs().tz(zone).add(minutes, "minute").format("YYYY-MM-DDTHH:mm");
}
