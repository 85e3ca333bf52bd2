/**
 * CPU seconds of processes, read from /proc: utime + stime of /proc/<pid>/stat (clock ticks of 10 ms). A bench
 * samples before and after a phase and divides by the wall time to report the cores each process used, so a
 * load generator that saturates its own core is told apart from a server that is slow.
 */
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_S = 100;

export function cpuSeconds(pid: number): number {
  try {
    // The command name may hold spaces or parentheses: the fields start after the last ") ".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return 0; // the process is gone
  }
}

/** The PostgreSQL processes on this machine (the server under test is local, and shared with others). */
function postgresPids(): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres')) pids.push(Number(pid));
    } catch {
      // gone between the listing and the read
    }
  }
  return pids;
}

/**
 * CPU of every PostgreSQL process, as a meter source that never goes backwards: a backend that exits takes its
 * CPU time with it, so a plain sum over the processes alive now would drop. Each process's last reading is kept;
 * the total only grows (a backend's time after its last sample before it exited is missed, an undercount).
 */
export function postgresCpuSource(): () => number {
  const last = new Map<number, number>();
  return () => {
    for (const pid of postgresPids()) last.set(pid, Math.max(last.get(pid) ?? 0, cpuSeconds(pid)));
    let total = 0;
    for (const v of last.values()) total += v;
    return total;
  };
}

/** CPU of every PostgreSQL process alive now. */
export function postgresCpuSeconds(): number {
  return postgresPids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

/** This process's CPU seconds (user + system). */
export function selfCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** One load average figure, for the README's note on how busy the shared machine was. */
export function loadAverage1m(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

/**
 * Samples named processes' CPU over a phase: `start()` then `stop()` gives cores used by each
 * (CPU seconds ÷ wall seconds), rounded to two places.
 */
export function cpuMeter(sources: Record<string, () => number>) {
  const t0 = performance.now();
  const before = Object.fromEntries(Object.entries(sources).map(([k, f]) => [k, f()]));
  return () => {
    const wallS = (performance.now() - t0) / 1000;
    return Object.fromEntries(Object.entries(sources).map(([k, f]) => [k, Math.round(((f() - before[k]!) / wallS) * 100) / 100]));
  };
}

/** Like `cpuMeter`, but `stop()` gives the CPU seconds each source used over the phase, unrounded. */
export function cpuSecondsMeter(sources: Record<string, () => number>) {
  const before = Object.fromEntries(Object.entries(sources).map(([k, f]) => [k, f()]));
  return () => Object.fromEntries(Object.entries(sources).map(([k, f]) => [k, f() - before[k]!]));
}
