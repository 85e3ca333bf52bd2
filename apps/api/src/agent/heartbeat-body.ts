import { HEARTBEATS_MAX_BEATS, type AgentHeartbeatBody, type AgentHeartbeatsBody } from '@ito/contracts';

/**
 * The common heartbeat checked by hand, as `agentHeartbeatBody` would check it, without building a copy: a beat
 * arrives from every node every few seconds, and the generic schema walk cost more per beat than the rest of the
 * route's own work (test/bench/README.md, heartbeat profile). It answers only "certainly valid" (the body
 * itself, which the schema would have answered unchanged) or "not sure" (undefined): everything else, every
 * refusal included, goes through the schema, so the refusals and their messages are the schema's.
 */
export function certainHeartbeat(raw: unknown): AgentHeartbeatBody | undefined {
  return certainBeat(raw, false) ? (raw as AgentHeartbeatBody) : undefined;
}

/**
 * The batch of `POST /v1/agent/heartbeats` checked the same way: every beat certain, its credential shaped as
 * one, and no credential twice. Anything else goes through `agentHeartbeatsBody`, whose refusals are the route's.
 */
export function certainHeartbeats(raw: unknown): AgentHeartbeatsBody | undefined {
  if (!isRecord(raw)) return undefined;
  for (const k in raw) if (k !== 'beats') return undefined;
  const beats = (raw as { beats?: unknown }).beats;
  if (!Array.isArray(beats) || beats.length === 0 || beats.length > HEARTBEATS_MAX_BEATS) return undefined;
  const seen = new Set<string>();
  for (const b of beats) {
    if (!certainBeat(b, true)) return undefined;
    const credential = (b as { credential: string }).credential;
    if (seen.has(credential)) return undefined;
    seen.add(credential);
  }
  return raw as AgentHeartbeatsBody;
}

const NODE_CREDENTIAL = /^ito_nc_[A-Za-z0-9_-]{43}$/;

function certainBeat(raw: unknown, withCredential: boolean): boolean {
  if (!isRecord(raw)) return false;
  let keys = 0;
  for (const k in raw) {
    if (k !== 'tasks' && k !== 'gpus' && !(withCredential && k === 'credential')) return false;
    keys++;
  }
  if (keys !== (withCredential ? 3 : 2)) return false;
  if (withCredential) {
    const credential = (raw as { credential: unknown }).credential;
    if (typeof credential !== 'string' || !NODE_CREDENTIAL.test(credential)) return false;
  }
  const { tasks, gpus } = raw as { tasks: unknown; gpus: unknown };
  if (!Array.isArray(tasks) || tasks.length > 16 || !Array.isArray(gpus) || gpus.length > 64) return false;
  for (const t of tasks) if (!certainTask(t)) return false;
  for (const g of gpus) if (!certainGpu(g)) return false;
  return true;
}

const TASK_ID = /^tsk_[0-9a-f]{32}$/;
const MAX = Number.MAX_SAFE_INTEGER;

function certainTask(t: unknown): boolean {
  if (!isRecord(t)) return false;
  for (const k in t) {
    const v = t[k];
    if (k === 'task_id') {
      if (typeof v !== 'string' || !TASK_ID.test(v)) return false;
    } else if (k === 'attempt') {
      if (!isInt(v, 1, 10_000)) return false;
    } else if (k === 'step') {
      if (!isInt(v, 0, MAX)) return false;
    } else return false;
  }
  return 'task_id' in t && 'attempt' in t;
}

function certainGpu(g: unknown): boolean {
  if (!isRecord(g)) return false;
  for (const k in g) {
    const v = g[k];
    if (k === 'index') {
      if (!isInt(v, 0, 63)) return false;
    } else if (k === 'healthy') {
      if (typeof v !== 'boolean') return false;
    } else if (k === 'temperature_c') {
      if (!isNumber(v, -50, 200)) return false;
    } else if (k === 'utilization') {
      if (!isNumber(v, 0, 1)) return false;
    } else if (k === 'memory_used_gb') {
      if (!isNumber(v, 0, 10_000)) return false;
    } else if (k === 'ecc_errors') {
      if (!isInt(v, 0, MAX)) return false;
    } else return false;
  }
  return 'index' in g && 'healthy' in g;
}

/** A plain object as a JSON parser makes it (an array or anything with another prototype is left to the schema). */
function isRecord(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

const isNumber = (v: unknown, min: number, max: number): boolean => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
const isInt = (v: unknown, min: number, max: number): boolean => isNumber(v, min, max) && Number.isInteger(v);
