import type { Command } from 'commander';

/**
 * Shell completion scripts made from the command tree itself (so a new command completes
 * without touching this file): `secrets completion bash|zsh|fish`, installed the way vault's
 * and doppler's are (`source <(secrets completion bash)`, a file in fish's completions folder).
 */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  readonly path: string[];
  readonly commands: { name: string; description: string }[];
  readonly options: { flags: string[]; description: string }[];
}

function walk(cmd: Command, path: string[] = [], out: Node[] = []): Node[] {
  const visible = cmd.commands.filter((c) => c.name() !== 'help');
  out.push({
    path,
    commands: visible.map((c) => ({ name: c.name(), description: c.description() })),
    options: cmd.options.map((o) => ({ flags: [o.short, o.long].filter((f): f is string => !!f), description: o.description })),
  });
  for (const c of visible) walk(c, [...path, c.name()], out);
  return out;
}

const words = (n: Node) => [...n.commands.map((c) => c.name), ...n.options.flatMap((o) => o.flags), '--help'].join(' ');
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(program: Command): string {
  const nodes = walk(program);
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;
  const cases = nodes.map((n) => `    ${quote(n.path.join(' '))}) words=${quote(words(n))} ;;`).join('\n');
  return `# ${name} completion for bash (zsh: the zsh script loads this through bashcompinit)
${fn}() {
  local cur path="" words="" i w
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) continue ;; esac
    case "\${path:+$path }$w" in
${nodes
  .filter((n) => n.path.length > 0)
  .map((n) => `      ${quote(n.path.join(' '))}) path="\${path:+$path }$w" ;;`)
  .join('\n')}
    esac
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F ${fn} ${name}
`;
}

function zsh(program: Command): string {
  return `#compdef ${program.name()}
# ${program.name()} completion for zsh: the bash completion through zsh's bashcompinit
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash(program)}`;
}

function fish(program: Command): string {
  const name = program.name();
  const nodes = walk(program);
  const lines = [`# ${name} completion for fish`];
  for (const n of nodes) {
    const seen = n.path.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${n.path[n.path.length - 1]}`;
    const notDeeper = n.commands.length > 0 ? `; and not __fish_seen_subcommand_from ${n.commands.map((c) => c.name).join(' ')}` : '';
    for (const c of n.commands)
      lines.push(`complete -c ${name} -f -n ${quote(seen + notDeeper)} -a ${c.name} -d ${quote(c.description.slice(0, 80))}`);
    for (const o of n.options) {
      const long = o.flags.find((f) => f.startsWith('--'))?.slice(2);
      const short = o.flags.find((f) => /^-[^-]/.test(f))?.slice(1);
      lines.push(
        `complete -c ${name} -n ${quote(n.path.length === 0 ? 'true' : seen)}${long ? ` -l ${long}` : ''}${short ? ` -s ${short}` : ''} -d ${quote(o.description.slice(0, 80))}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(program: Command, shell: Shell): string {
  return shell === 'bash' ? bash(program) : shell === 'zsh' ? zsh(program) : fish(program);
}
