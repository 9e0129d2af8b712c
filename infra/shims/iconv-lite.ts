/**
 * Bundled in place of `iconv-lite` (infra/bundle.ts SHIMS). mysql2 reaches iconv-lite only
 * for character sets that Node's Buffer does not know (utf8, latin1 and ascii never get
 * here), and then only `getDecoder` / `getEncoder`. iconv-lite carries ~300 KB of code
 * tables into every function that can open a MySQL/MariaDB session; the WHATWG TextDecoder
 * built into Node (full ICU in Lambda) decodes the same legacy character sets. CESU-8, which
 * mysql2 uses for MySQL's `utf8` (utf8mb3: system tables, column metadata), is not a WHATWG
 * encoding and is coded here (UTF-8 whose supplementary characters are two 3-byte
 * surrogates). Encoding to any other non-Buffer character set is refused with a clear error:
 * the service writes nothing but UTF-8 statements (its sessions use utf8mb4).
 */

interface Decoder {
  write(chunk: Uint8Array): string;
  end(): string | undefined;
}

const ALIASES: Readonly<Record<string, string>> = {
  cp1252: 'windows-1252',
  cp1251: 'windows-1251',
  cp1250: 'windows-1250',
  cp1256: 'windows-1256',
  cp1257: 'windows-1257',
  cp866: 'ibm866',
  koi8r: 'koi8-r',
  koi8u: 'koi8-u',
  sjis: 'shift_jis',
  ujis: 'euc-jp',
  eucjpms: 'euc-jp',
  euckr: 'euc-kr',
  gb2312: 'gbk',
  big5: 'big5',
  gbk: 'gbk',
  gb18030: 'gb18030',
  utf16: 'utf-16be',
  utf16le: 'utf-16le',
  tis620: 'windows-874',
  greek: 'iso-8859-7',
  hebrew: 'iso-8859-8',
  latin2: 'iso-8859-2',
  latin5: 'windows-1254',
  latin7: 'iso-8859-13',
};

function label(encoding: string): string {
  const e = encoding.toLowerCase().replace(/[^a-z0-9]/g, '');
  return ALIASES[e] ?? encoding;
}

const isCesu8 = (encoding: string) => encoding.toLowerCase().replace(/[^a-z0-9]/g, '') === 'cesu8';

/** CESU-8 (and UTF-8) decoding that keeps surrogate code units, streaming across chunks. */
function cesu8Decoder(): Decoder {
  let pending: number[] = [];
  const take = (bytes: number[], final: boolean): string => {
    let out = '';
    let i = 0;
    while (i < bytes.length) {
      const b = bytes[i]!;
      const length = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (i + length > bytes.length) {
        if (!final) break;
        out += '\ufffd';
        i = bytes.length;
        break;
      }
      if (length === 1) out += b < 0x80 ? String.fromCharCode(b) : '\ufffd';
      else {
        let code = b & (0xff >> (length + 1));
        for (let k = 1; k < length; k++) code = (code << 6) | (bytes[i + k]! & 0x3f);
        out += String.fromCodePoint(code);
      }
      i += length;
    }
    pending = bytes.slice(i);
    return out;
  };
  return {
    write: (chunk) => take([...pending, ...chunk], false),
    end: () => (pending.length ? take(pending, true) : undefined),
  };
}

export function getDecoder(encoding: string): Decoder {
  if (isCesu8(encoding)) return cesu8Decoder();
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

interface Encoder {
  write(text: string): Buffer;
  end(): Buffer | undefined;
}

export function getEncoder(encoding: string): Encoder {
  if (!isCesu8(encoding)) throw new Error(`encoding text to ${encoding} is not supported (the service sends UTF-8 only)`);
  return {
    // each UTF-16 code unit on its own: a supplementary character becomes two 3-byte surrogates
    write: (text) =>
      Buffer.concat([...text].flatMap((ch) => (ch.length === 2 ? [ch[0]!, ch[1]!] : [ch])).map((unit) => encodeUnit(unit.charCodeAt(0)))),
    end: () => undefined,
  };
}

function encodeUnit(code: number): Buffer {
  if (code < 0x80) return Buffer.from([code]);
  if (code < 0x800) return Buffer.from([0xc0 | (code >> 6), 0x80 | (code & 0x3f)]);
  return Buffer.from([0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]);
}

export function encodingExists(encoding: string): boolean {
  if (isCesu8(encoding)) return true;
  try {
    new TextDecoder(label(encoding));
    return true;
  } catch {
    return false;
  }
}

export default { getDecoder, getEncoder, encodingExists };
