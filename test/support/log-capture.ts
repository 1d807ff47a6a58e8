/**
 * Every log line a service wrote (a pino destination), kept in memory so tests can search
 * it for secrets or wait for a line. With `echo`, each line is also written to stdout
 * (for TEST_LOG_LEVEL debugging).
 */
export class LogCapture {
  readonly lines: string[] = [];
  constructor(private readonly echo = false) {}
  write(line: string): void {
    this.lines.push(line);
    if (this.echo) process.stdout.write(line);
  }
  text(): string {
    return this.lines.join("");
  }
  /** The lines written since `mark` (an earlier `lines.length`). */
  since(mark: number): string {
    return this.lines.slice(mark).join("");
  }
}
