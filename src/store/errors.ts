/** Storage failures a capability may act on, whatever the database said them in. */
export class DuplicateKeyError extends Error {
  constructor(
    readonly table: string,
    options?: { cause?: unknown },
  ) {
    super(`A row with the same key already exists in ${table}`, options);
    this.name = 'DuplicateKeyError';
  }
}

/** PostgreSQL's unique_violation, SQLite's UNIQUE or PRIMARY KEY constraint. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Runs a write, turning a unique violation into a DuplicateKeyError naming the table. */
export async function uniquely<T>(table: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicateKeyError(table, { cause: error });
    throw error;
  }
}
