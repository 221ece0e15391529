import type { Nodes } from 'mdast';
import { parsePage } from './pages.js';

/**
 * Mermaid's own parser, the one GitHub renders charts with: a chart that fails here shows as an
 * error box on the published page. Mermaid sanitizes titles with DOMPurify, which needs a window:
 * happy-dom gives it one, once, before mermaid is first loaded.
 */
let loaded: Promise<{ parse: (text: string) => Promise<unknown> }> | undefined;

function mermaidParser() {
  loaded ??= (async () => {
    const { Window } = await import('happy-dom');
    const window = new Window();
    Object.assign(globalThis, { window, document: window.document });
    const { default: mermaid } = await import('mermaid');
    return mermaid;
  })();
  return loaded;
}

/** Every Mermaid block of a page, as written. */
export function mermaidBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const walk = (node: Nodes): void => {
    if (node.type === 'code' && node.lang === 'mermaid') blocks.push(node.value);
    if ('children' in node) for (const child of node.children as Nodes[]) walk(child);
  };
  walk(parsePage(markdown));
  return blocks;
}

/** The blocks Mermaid refuses, each with its first error line; [] when every block parses. */
export async function mermaidProblems(markdown: string): Promise<string[]> {
  const mermaid = await mermaidParser();
  const problems: string[] = [];
  for (const block of mermaidBlocks(markdown)) {
    try {
      await mermaid.parse(block);
    } catch (e) {
      problems.push(
        `${String((e as Error).message)
          .split('\n')
          .slice(0, 3)
          .join(' ')}\n${block}`,
      );
    }
  }
  return problems;
}
