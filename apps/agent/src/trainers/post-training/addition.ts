import type { Random } from '../random.js';

/**
 * The reference trainer's verifiable toy task: add two numbers of up to three digits. The answer is written as
 * four digits, least significant first as it is generated, and checked exactly by the verifier, so a reward is
 * never a judgement call.
 */
export const OPERAND_DIGITS = 3;
export const ANSWER_DIGITS = OPERAND_DIGITS + 1;
export const OPERAND_LIMIT = 10 ** OPERAND_DIGITS;

export interface Problem {
  a: number;
  b: number;
}

export function drawProblem(rng: Random): Problem {
  return { a: rng.int(OPERAND_LIMIT), b: rng.int(OPERAND_LIMIT) };
}

export function promptOf(p: Problem): string {
  return `${p.a}+${p.b}=`;
}

/** The correct answer's digits, least significant first. */
export function answerDigits(p: Problem): number[] {
  const sum = p.a + p.b;
  return Array.from({ length: ANSWER_DIGITS }, (_, k) => Math.floor(sum / 10 ** k) % 10);
}

/** A completion as text: the digits most significant first, as a person reads the sum. */
export function completionText(digits: number[]): string {
  return [...digits].reverse().join('');
}

export function parseCompletion(text: string): number[] | null {
  if (!/^\d{4}$/.test(text)) return null;
  return [...text].reverse().map(Number);
}

/** The `addition` verifier: 1 for the exact sum, else 0. */
export function verify(p: Problem, digits: number[]): number {
  const want = answerDigits(p);
  return want.every((d, k) => digits[k] === d) ? 1 : 0;
}

/** Parses a prompt back into its problem (batches carry text, as real rollouts do). */
export function parsePrompt(text: string): Problem | null {
  const m = /^(\d{1,3})\+(\d{1,3})=$/.exec(text);
  return m ? { a: Number(m[1]), b: Number(m[2]) } : null;
}

/**
 * DAPO's overlong reward shaping: no penalty up to `max − buffer` tokens, a linear one to −1 across the buffer,
 * and −1 beyond `max` (a truncated completion).
 */
export function overlongPenalty(tokens: number, max: number, buffer: number): number {
  if (tokens <= max - buffer) return 0;
  if (tokens > max) return -1;
  return -(tokens - (max - buffer)) / buffer;
}
