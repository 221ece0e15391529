import { lstatSync, readFileSync } from 'node:fs';
import { InputError } from '../errors.js';
import { MAX_MANIFEST_BYTES } from './defaults.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A file the user wrote, as UTF-8 text. A byte that is no UTF-8 would otherwise become U+FFFD
 * and travel on into the pages ('��' in a title): an error naming the line of the first one.
 */
export function readUtf8File(file: string, display = file): string {
  let bytes: Buffer;
  // A submission's manifest committed as a link would make us read (and quote) a file of the host.
  if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink())
    throw new InputError(display, '', 'is a symbolic link; it must be a regular file');
  const size = lstatSync(file, { throwIfNoEntry: false })?.size ?? 0;
  if (size > MAX_MANIFEST_BYTES)
    throw new InputError(
      display,
      '',
      `${size} bytes: a manifest holds at most ${MAX_MANIFEST_BYTES} (docs/campaign.md#limits); nothing was read`,
    );
  try {
    bytes = readFileSync(file);
  } catch {
    throw new InputError(display, '', 'cannot read the file');
  }
  try {
    return utf8.decode(bytes);
  } catch {
    throw new InputError(display, `line ${firstBadLine(bytes)}`, 'not UTF-8 text (save the file as UTF-8)');
  }
}

/** A newline byte is never part of a multi-byte UTF-8 sequence, so lines can be checked alone. */
function firstBadLine(bytes: Buffer): number {
  let start = 0;
  for (let line = 1; ; line++) {
    const end = bytes.indexOf(0x0a, start);
    const part = bytes.subarray(start, end < 0 ? bytes.length : end);
    try {
      utf8.decode(part);
    } catch {
      return line;
    }
    if (end < 0) return line;
    start = end + 1;
  }
}
