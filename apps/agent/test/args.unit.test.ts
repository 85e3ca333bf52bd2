import { describe, expect, it } from 'vitest';
import { parseAgentArgs, UsageError } from '../src/args.js';

describe('ito-agent flags: the rendezvous endpoint', () => {
  it('is none unless both flags are given', () => {
    expect(parseAgentArgs(['--executor', 'simulated'])).toMatchObject({ rendezvous: null });
    expect(parseAgentArgs(['--executor', 'simulated', '--rendezvous-addr', '10.0.0.7', '--rendezvous-port', '29500'])).toMatchObject({
      rendezvous: { addr: '10.0.0.7', port: 29500 },
    });
    expect(parseAgentArgs(['--executor=simulated', '--rendezvous-addr=gpu-01.cluster.local', '--rendezvous-port=29501'])).toMatchObject({
      rendezvous: { addr: 'gpu-01.cluster.local', port: 29501 },
    });
  });

  it.each([
    [['--rendezvous-addr', '10.0.0.7'], 'go together'],
    [['--rendezvous-port', '29500'], 'go together'],
    [['--rendezvous-addr', 'http://10.0.0.7', '--rendezvous-port', '29500'], 'IPv4 address or a host name'],
    [['--rendezvous-addr', 'a b', '--rendezvous-port', '29500'], 'IPv4 address or a host name'],
    [['--rendezvous-addr', '10.0.0.7', '--rendezvous-port', '80'], 'from 1024 to 65535'],
    [['--rendezvous-addr', '10.0.0.7', '--rendezvous-port', '70000'], 'from 1024 to 65535'],
    [['--rendezvous-addr', '10.0.0.7', '--rendezvous-port', '0x7530'], 'from 1024 to 65535'],
  ])('refuses %j with a usage error that echoes nothing', (flags, message) => {
    const attempt = () => parseAgentArgs(['--executor', 'simulated', ...flags]);
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(message);
    try {
      attempt();
    } catch (err) {
      expect((err as Error).message).not.toContain('http://');
    }
  });
});
