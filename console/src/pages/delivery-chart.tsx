import "@mantine/charts/styles.css";
import { AreaChart } from "@mantine/charts";

export interface DeliveryPoint {
  time: string;
  Delivered: number;
  Failed: number;
  Bounced: number;
  Throttled: number;
}

/** Cumulative outcomes over time (loaded on its own: the chart library is the console's largest part). */
export default function DeliveryChart({ points }: { points: DeliveryPoint[] }) {
  return (
    <AreaChart
      h={260}
      data={points}
      dataKey="time"
      type="stacked"
      withLegend
      curveType="linear"
      withDots={points.length < 30}
      series={[
        { name: "Delivered", color: "green.7" },
        { name: "Failed", color: "red.7" },
        { name: "Bounced", color: "orange.7" },
        { name: "Throttled", color: "yellow.7" },
      ]}
      aria-label="Delivery over time"
      data-testid="delivery-chart"
    />
  );
}
