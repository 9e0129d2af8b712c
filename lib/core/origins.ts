/**
 * Parses a comma-separated origin list. Each entry must be a serialized origin
 * (`scheme://host[:port]`, lower case, no path, no trailing slash, not `*` or `null`),
 * because the browser's Origin header is compared with it byte for byte.
 */
export function parseOrigins(value: string | readonly string[] | undefined): string[] {
  const entries = (typeof value === 'string' ? value.split(',') : (value ?? [])).map((s) => s.trim()).filter(Boolean);
  const isOrigin = (entry: string): boolean => {
    try {
      const url = new URL(entry);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === entry;
    } catch {
      return false;
    }
  };
  const bad = entries.filter((e) => !isOrigin(e));
  if (bad.length > 0) {
    throw new Error(
      `not an origin: ${bad.map((b) => JSON.stringify(b)).join(', ')} (expected scheme://host[:port] exactly as browsers send it, e.g. https://app.example.com)`,
    );
  }
  return [...new Set(entries)];
}
