// Minimal typings for the parts of sql.js 1.16 the search index uses (the package ships none).
declare module "sql.js" {
  export type SqlValue = number | string | Uint8Array | null;
  export interface QueryExecResult {
    columns: string[];
    values: SqlValue[][];
  }
  export interface Statement {
    bind(values?: SqlValue[] | Record<string, SqlValue>): boolean;
    step(): boolean;
    get(params?: SqlValue[]): SqlValue[];
    getAsObject(params?: SqlValue[]): Record<string, SqlValue>;
    run(values?: SqlValue[]): void;
    reset(): void;
    free(): boolean;
  }
  export interface Database {
    run(sql: string, params?: SqlValue[]): Database;
    exec(sql: string, params?: SqlValue[]): QueryExecResult[];
    prepare(sql: string, params?: SqlValue[]): Statement;
    export(): Uint8Array;
    close(): void;
    getRowsModified(): number;
  }
  export interface SqlJsStatic {
    Database: new (data?: ArrayLike<number> | Uint8Array | null) => Database;
  }
  export interface InitOptions {
    wasmBinary?: ArrayBuffer | Uint8Array;
    locateFile?: (file: string) => string;
  }
  export default function initSqlJs(opts?: InitOptions): Promise<SqlJsStatic>;
}
