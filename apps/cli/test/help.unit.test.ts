import { describe, expect, it } from 'vitest';
import { newId } from '@ito/runs';
import { renderHelp, PREVIEW_MARK } from '../src/args/help.js';
import { ADMIN_GROUPS, ADMIN_VERBS } from '../src/args/admin-verbs.js';
import type { CommandTable } from '../src/args/parse.js';
import { GLOBAL_FLAGS, GROUPS, SECRET_FLAGS, VERBS } from '../src/args/verbs.js';

const table: CommandTable = { verbs: VERBS, groups: GROUPS, globalFlags: GLOBAL_FLAGS, secretFlags: SECRET_FLAGS };
/** The form of every id the server issues (packages/runs/src/ids.ts): a type prefix and 128 random bits in hex. */
const SERVER_ID = /^(ten|key|bkg|run|cfm|node)_[0-9a-f]{32}$/;

describe('ito --help', () => {
  it('marks exactly the preview verbs as not available yet, and says what that means', () => {
    // Every verb is served today; a table with one verb turned back to preview proves the marking still works.
    const withPreview: CommandTable = { ...table, verbs: VERBS.map((v) => (v.name === 'desk telemetry' ? { ...v, availability: 'preview' as const } : v)) };
    const text = renderHelp('ito', withPreview, null, 'the Itô Training client')!;
    const verbLines = text.split('\n').filter((l) => VERBS.some((v) => l.startsWith(`  ${v.name} `)));
    expect(verbLines).toHaveLength(VERBS.length);
    const preview = withPreview.verbs.filter((v) => v.availability === 'preview');
    expect(preview).toHaveLength(1);
    for (const v of withPreview.verbs) {
      const line = verbLines.find((l) => l.startsWith(`  ${v.name} `))!;
      expect(line.includes(PREVIEW_MARK), v.name).toBe(v.availability === 'preview');
    }
    expect(text).toContain(`${PREVIEW_MARK}: the verb is wired, but the server does not offer its route yet`);
    expect(renderHelp('ito', withPreview, 'desk telemetry', '')).toContain(PREVIEW_MARK);
    expect(renderHelp('ito', table, 'desk telemetry', '')).not.toContain(PREVIEW_MARK);
    expect(renderHelp('ito', table, 'train', '')).not.toContain(PREVIEW_MARK);
  });

  it('shows ids and confirmation references in examples only in the form the server issues', () => {
    expect(newId('cfm')).toMatch(SERVER_ID);
    const examples = [...VERBS, ...ADMIN_VERBS].map((v) => v.example);
    const ids = examples.flatMap((e) => e.match(/\b(ten|key|bkg|run|cfm|cnf|node)_\w+/g) ?? []);
    expect(ids.length).toBeGreaterThan(15);
    for (const id of ids) expect(id).toMatch(SERVER_ID);
    const train = renderHelp('ito', table, 'train', '')!;
    expect(train).toMatch(/--confirmation-ref cfm_[0-9a-f]{32} /);
    const admin = renderHelp('ito-admin', { verbs: ADMIN_VERBS, groups: ADMIN_GROUPS, globalFlags: [], secretFlags: [] }, 'node register', '')!;
    expect(admin).toMatch(/--booking bkg_[0-9a-f]{32} /);
  });
});
