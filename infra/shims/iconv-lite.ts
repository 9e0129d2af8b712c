/**
 * Bundled in place of `iconv-lite` (infra/bundle.ts SHIMS). mysql2 reaches iconv-lite only
 * for character sets that Node's Buffer does not know (utf8, latin1 and ascii never get
 * here), and then only `getDecoder` / `getEncoder`. iconv-lite carries ~300 KB of code
 * tables into every function that can open a MySQL/MariaDB session; the WHATWG TextDecoder
 * built into Node (full ICU in Lambda) decodes the same legacy character sets. Encoding to
 * a non-Buffer character set is refused with a clear error: the service writes nothing but
 * UTF-8 statements (its sessions use utf8mb4).
 */

interface Decoder {
  write(chunk: Uint8Array): string;
  end(): string | undefined;
}

const ALIASES: Readonly<Record<string, string>> = { cp1252: 'windows-1252', cp1251: 'windows-1251', cp1250: 'windows-1250', cp1256: 'windows-1256', cp1257: 'windows-1257', cp866: 'ibm866', koi8r: 'koi8-r', koi8u: 'koi8-u', sjis: 'shift_jis', ujis: 'euc-jp', eucjpms: 'euc-jp', euckr: 'euc-kr', gb2312: 'gbk', big5: 'big5', gbk: 'gbk', gb18030: 'gb18030', utf16: 'utf-16be', utf16le: 'utf-16le', tis620: 'windows-874', greek: 'iso-8859-7', hebrew: 'iso-8859-8', latin2: 'iso-8859-2', latin5: 'windows-1254', latin7: 'iso-8859-13' };

function label(encoding: string): string {
  const e = encoding.toLowerCase().replace(/[^a-z0-9]/g, '');
  return ALIASES[e] ?? encoding;
}

export function getDecoder(encoding: string): Decoder {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label(encoding));
  } catch {
    throw new Error(`character set ${encoding} is not supported`);
  }
  return {
    write: (chunk) => decoder.decode(chunk, { stream: true }),
    end: () => decoder.decode() || undefined,
  };
}

export function getEncoder(encoding: string): never {
  throw new Error(`encoding text to ${encoding} is not supported (the service sends UTF-8 only)`);
}

export function encodingExists(encoding: string): boolean {
  try {
    new TextDecoder(label(encoding));
    return true;
  } catch {
    return false;
  }
}

export default { getDecoder, getEncoder, encodingExists };
