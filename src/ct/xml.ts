/**
 * A small XML reader for valgrind's --xml output: elements, text and the five predefined entities
 * (plus numeric ones). No attributes, namespaces or DTDs are needed for that format; anything it
 * cannot read is an error naming the offset, never a guess.
 */

export interface XmlElement {
  name: string;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(Number.parseInt(e.slice(1), 10));
    return ENTITIES[e] ?? whole;
  });
}

/** The document's root element; throws naming the offset when the text is not well-formed. */
export function parseXml(text: string): XmlElement {
  const root: XmlElement = { name: '#document', children: [], text: '' };
  const open: XmlElement[] = [root];
  let i = 0;
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const top = open[open.length - 1]!;
    if (lt < 0) {
      top.text += decode(text.slice(i));
      break;
    }
    if (lt > i) top.text += decode(text.slice(i, lt));
    if (text.startsWith('<?', lt) || text.startsWith('<!--', lt)) {
      const close = text.indexOf(text.startsWith('<?', lt) ? '?>' : '-->', lt);
      if (close < 0) throw new Error(`unterminated declaration or comment at offset ${lt}`);
      i = close + (text.startsWith('<?', lt) ? 2 : 3);
      continue;
    }
    const gt = text.indexOf('>', lt);
    if (gt < 0) throw new Error(`unterminated tag at offset ${lt}`);
    const tag = text.slice(lt + 1, gt).trim();
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      if (top.name !== name || open.length === 1) throw new Error(`</${name}> at offset ${lt} closes <${top.name}>`);
      open.pop();
    } else {
      const selfClosing = tag.endsWith('/');
      const name = (selfClosing ? tag.slice(0, -1) : tag).trim().split(/\s+/)[0] ?? '';
      if (!/^[A-Za-z_][\w.-]*$/.test(name)) throw new Error(`malformed tag <${tag}> at offset ${lt}`);
      const element: XmlElement = { name, children: [], text: '' };
      top.children.push(element);
      if (!selfClosing) open.push(element);
    }
    i = gt + 1;
  }
  if (open.length > 1) throw new Error(`<${open[open.length - 1]!.name}> is never closed`);
  const elements = root.children;
  if (elements.length !== 1) throw new Error(`${elements.length} root elements`);
  return elements[0]!;
}

/** The first child called `name`. */
export const child = (e: XmlElement | undefined, name: string): XmlElement | undefined => e?.children.find((c) => c.name === name);
/** Every child called `name`. */
export const childrenOf = (e: XmlElement | undefined, name: string): XmlElement[] => e?.children.filter((c) => c.name === name) ?? [];
/** The trimmed text of the first child called `name`, or undefined. */
export const textOf = (e: XmlElement | undefined, name: string): string | undefined => child(e, name)?.text.trim();
