/** What anything thrown says: an Error's message, else the value as text. */
export const messageOf = (thrown: unknown): string => (thrown instanceof Error ? thrown.message : String(thrown));
