// Parsing of external ids (GraphQL `ID`, REST path segments) into database ids.

const MAX_ID = 2_147_483_647; // ids are PostgreSQL `integer`

/** The database id an external id denotes, or null when no row can have it ("abc", "0", "1.5", huge). */
export function parseId(value: string | number): number | null {
  const text = String(value);
  if (!/^[1-9]\d{0,9}$/.test(text)) return null;
  const id = Number(text);
  return id <= MAX_ID ? id : null;
}
