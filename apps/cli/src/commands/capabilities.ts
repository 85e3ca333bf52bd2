import { createRequire } from 'node:module';
import { ok } from '@ito/contracts';
import { VERBS } from '../args/verbs.js';
import { table } from '../human/format.js';
import type { Handler } from './handler.js';

/** The bridge refuses a capability manifest without a notice; one sentence says what this is. */
export const CAPABILITIES_NOTICE =
  'ito is the command-line client of Itô Training, and this capability manifest describes each of its verbs: availability, credential, network use, side effect and authority.';

/** The manifest ECC's bridge reads before forwarding anything: built from the verb table, no I/O beyond it. */
export function capabilities() {
  const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
  return {
    contract_version: 'ito.cli.capabilities.v1',
    cli: { name: 'ito', version: pkg.version, private: true },
    commands: VERBS.map((v) => ({
      name: v.name,
      availability: v.availability,
      auth: v.auth,
      network: v.network,
      side_effect: v.side_effect,
      authority: v.authority,
    })),
    mcp_tools: [],
    output_contract: {
      json_success_envelope: true,
      // With --json a failure is the envelope on stdout too; stderr carries only logs and progress.
      errors_on_stderr: false,
      unsupported_commands_contact_nothing: true,
    },
  };
}

export const capabilitiesCommand: Handler = async () => {
  const data = capabilities();
  return {
    envelope: ok(data, { liveApiContacted: false, notice: CAPABILITIES_NOTICE }),
    human: (d: typeof data) =>
      `${d.cli.name} ${d.cli.version} (${d.contract_version})\n\n${table(d.commands, ['name', 'availability', 'auth', 'network', 'side_effect', 'authority'])}`,
  };
};
