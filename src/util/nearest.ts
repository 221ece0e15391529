/** Levenshtein distance, for suggesting the name a typo meant. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** The known name nearest to `name`, within two edits (options, manifest keys); undefined when none is. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  return known.filter((k) => editDistance(k, name) <= 2).sort((a, b) => editDistance(a, name) - editDistance(b, name))[0];
}
