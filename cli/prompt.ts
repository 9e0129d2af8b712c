import { readFileSync } from 'node:fs';

/**
 * A secret typed by the person (API key, password): on a terminal, a prompt on stderr with
 * the echo off (nothing of it on the screen or in the scrollback); otherwise stdin, so
 * `secrets login --method api-key < key.txt` and pipes work. Never a command-line argument
 * (other users see those in `ps`).
 */
export async function readHidden(
  prompt: string,
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  if (!input.isTTY) return readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  output.write(prompt);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  return await new Promise<string>((resolve, reject) => {
    let typed = '';
    const done = (fn: () => void) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      output.write('\n');
      fn();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(() => resolve(typed));
        if (ch === '\u0003') return done(() => reject(new Error('interrupted')));
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else if (ch >= ' ') typed += ch;
      }
    };
    input.on('data', onData);
  });
}
