// The few better-sqlite3 APIs the bench uses (the package ships no types, and @types is not installed).
declare module "better-sqlite3" {
  export interface Statement {
    run(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  }
  export interface Database {
    prepare(sql: string): Statement;
    exec(sql: string): void;
    pragma(sql: string): unknown;
    transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
    close(): void;
  }
  const Database: new (file: string) => Database;
  export default Database;
}
