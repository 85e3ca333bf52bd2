import { readFileSync } from 'node:fs';

/** The body of one `## ` section of a Markdown file, heading excluded; throws when the heading is missing. */
export function markdownSection(path: string, heading: string): string {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`${path} has no section "## ${heading}"`);
  const body = text.slice(start + heading.length + 5);
  const next = body.search(/\n## /);
  return next === -1 ? body : body.slice(0, next);
}

/** The fenced code blocks of a given language in a Markdown text, in order, without their fences. */
export function codeBlocks(markdown: string, language: string): string[] {
  const blocks: string[] = [];
  const fence = new RegExp('^```' + language + '\\n([\\s\\S]*?)^```$', 'gm');
  for (const m of markdown.matchAll(fence)) blocks.push(m[1]!);
  return blocks;
}
