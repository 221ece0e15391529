import { readFileSync } from 'node:fs';

export interface ElfSizes {
  /** Sum of p_memsz over PT_LOAD segments: the static image the loader maps. */
  loadBytes: number;
  text: number;
  /** .data, .rodata and .data.rel.ro: initialised data, writable or not. */
  data: number;
  bss: number;
}

/** Reads a 64-bit little-endian ELF file's load segments and main sections. */
export function elfSizes(path: string): ElfSizes {
  const b = readFileSync(path);
  if (b.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${path}: not an ELF file`);
  if (b[4] !== 2 || b[5] !== 1) throw new Error(`${path}: only 64-bit little-endian ELF is supported`);
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  const shstrndx = b.readUInt16LE(0x3e);
  const loadBytes = loadSegments(b).reduce((a, s) => a + s.memsz, 0);
  const sizes = { text: 0, data: 0, bss: 0 };
  if (shoff > 0 && shstrndx < shnum) {
    const strOff = Number(b.readBigUInt64LE(shoff + shstrndx * shentsize + 0x18));
    for (let i = 0; i < shnum; i++) {
      const at = shoff + i * shentsize;
      const nameOff = b.readUInt32LE(at);
      const end = b.indexOf(0, strOff + nameOff);
      const name = b.toString('latin1', strOff + nameOff, end);
      const size = Number(b.readBigUInt64LE(at + 0x20));
      if (name === '.text') sizes.text += size;
      else if (name === '.data' || name === '.rodata' || name === '.data.rel.ro') sizes.data += size;
      else if (name === '.bss') sizes.bss += size;
    }
  }
  return { loadBytes, ...sizes };
}

export interface LoadSegment {
  vaddr: number;
  offset: number;
  filesz: number;
  memsz: number;
}

/** PT_LOAD segments of a 64-bit little-endian ELF image: to map symbol addresses to file bytes. */
export function loadSegments(b: Uint8Array): LoadSegment[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const phoff = Number(v.getBigUint64(0x20, true));
  const phentsize = v.getUint16(0x36, true);
  const phnum = v.getUint16(0x38, true);
  const out: LoadSegment[] = [];
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (v.getUint32(at, true) !== 1) continue;
    out.push({
      offset: Number(v.getBigUint64(at + 0x08, true)),
      vaddr: Number(v.getBigUint64(at + 0x10, true)),
      filesz: Number(v.getBigUint64(at + 0x20, true)),
      memsz: Number(v.getBigUint64(at + 0x28, true)),
    });
  }
  return out;
}
