// bench:cold's probe, run once per measurement in a fresh Node process: imports one built
// handler module and reports, on stdout, the milliseconds from process start (performance's
// time origin) until the import resolved, and the resident set size right then.
const url = process.argv[2];
try {
  const mod = await import(url);
  const ms = performance.now();
  const rss = process.memoryUsage().rss;
  process.stdout.write(JSON.stringify({ ms, rss, exports: Object.keys(mod).length }));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: `${error?.name ?? 'Error'}: ${error?.message ?? String(error)}` }));
}
