import type { BlockContent, Code, Heading, Link, List, PhrasingContent, Root, RootContent, Table, TableCell, TableRow, Text } from 'mdast';
import { gfmToMarkdown } from 'mdast-util-gfm';
import { toMarkdown } from 'mdast-util-to-markdown';

/** Small builders: a page is data (an mdast tree), serialized once by `serialize`. */
export type Inline = PhrasingContent | string;

const inline = (c: Inline): PhrasingContent => (typeof c === 'string' ? ({ type: 'text', value: c } satisfies Text) : c);

export const text = (value: string): Text => ({ type: 'text', value });
export const code = (value: string): PhrasingContent => ({ type: 'inlineCode', value });
export const strong = (...children: Inline[]): PhrasingContent => ({ type: 'strong', children: children.map(inline) });
export const link = (url: string, ...children: Inline[]): Link => ({ type: 'link', url, children: children.map(inline) });
export const heading = (depth: 1 | 2 | 3 | 4, ...children: Inline[]): Heading => ({
  type: 'heading',
  depth,
  children: children.map(inline),
});
export const para = (...children: Inline[]): BlockContent => ({ type: 'paragraph', children: children.map(inline) });
export const bullets = (items: Inline[][]): List => ({
  type: 'list',
  ordered: false,
  spread: false,
  children: items.map((children) => ({
    type: 'listItem',
    spread: false,
    children: [{ type: 'paragraph', children: children.map(inline) }],
  })),
});
export const mermaid = (value: string): Code => ({ type: 'code', lang: 'mermaid', value });

export type Cell = Inline | Inline[];

const cell = (c: Cell): TableCell => ({ type: 'tableCell', children: (Array.isArray(c) ? c : [c]).map(inline) });
const row = (cells: Cell[]): TableRow => ({ type: 'tableRow', children: cells.map(cell) });

/**
 * A GFM table. A table never goes out with a header only: `empty` is the row shown when there is
 * nothing to list (the old pages printed bare headers, which readers took for a rendering bug).
 */
export function table(header: string[], rows: Cell[][], empty?: Cell[]): Table {
  const body = rows.length > 0 ? rows : [empty ?? [text('not recorded'), ...header.slice(1).map(() => text('—'))]];
  return { type: 'table', align: header.map(() => null), children: [row(header), ...body.map(row)] };
}

export function root(children: RootContent[]): Root {
  return { type: 'root', children };
}

/** One part of a page: a heading and what follows it, from the page's inputs. */
export type Section<A extends unknown[]> = (...args: A) => RootContent[];

/** A page is its sections, in order, each rendered from the same inputs. */
export function sectionsPage<A extends unknown[]>(sections: ReadonlyArray<Section<A>>, ...args: A): Root {
  return root(sections.flatMap((section) => section(...args)));
}

export function serialize(tree: Root): string {
  return toMarkdown(tree, { extensions: [gfmToMarkdown({ tablePipeAlign: false })], bullet: '-', fences: true, rule: '-' });
}
