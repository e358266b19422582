/** Tags are stored trimmed, lowercase and without duplicates, so matching is case-insensitive. */
export function normalizeTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim().toLowerCase()).filter((tag) => tag.length > 0))];
}
