import { describe, expect, it } from 'vitest';
import { validatePlanRequest, type BookingTopology } from '@ito/planner';
import { booking, NOW } from './fixtures.js';

const problems = (overrides: Partial<BookingTopology>, now: Date = NOW) => validatePlanRequest(booking(overrides), now);

describe('validatePlanRequest', () => {
  it('finds nothing wrong with the example booking', () => expect(problems({})).toEqual([]));

  it('names a missing or empty GPU model and fabric', () => {
    expect(problems({ gpu: '' })).toEqual(['booking.gpu must name a GPU model']);
    expect(problems({ gpu: 7 as unknown as string })).toEqual(['booking.gpu must name a GPU model']);
    expect(problems({ fabric: '' })).toEqual(['booking.fabric must name a fabric']);
    expect(problems({ fabric: null as unknown as string })).toEqual(['booking.fabric must name a fabric']);
  });

  it('takes 1 to 4096 whole nodes, and 1 to 72 whole GPUs per node, bounds included', () => {
    for (const nodes of [1, 4096]) expect(problems({ nodes })).toEqual([]);
    for (const nodes of [0, 4097, 1.5, Number.NaN]) expect(problems({ nodes })).toEqual(['booking.nodes must be an integer from 1 to 4096']);
    for (const gpusPerNode of [1, 72]) expect(problems({ gpusPerNode })).toEqual([]);
    for (const gpusPerNode of [0, 73, 2.5]) expect(problems({ gpusPerNode })).toEqual(['booking.gpusPerNode must be an integer from 1 to 72']);
  });

  it('takes a free booking, never a negative, infinite or NaN rate', () => {
    expect(problems({ rateUsdPerGpuHour: 0 })).toEqual([]);
    for (const rateUsdPerGpuHour of [-0.01, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(problems({ rateUsdPerGpuHour })).toEqual(['booking.rateUsdPerGpuHour must be a non-negative number']);
    }
  });

  it('needs a term of two valid instants, ending after it starts', () => {
    const invalid = ['booking term start and end must be valid instants'];
    expect(problems({ termStart: new Date(Number.NaN) })).toEqual(invalid);
    expect(problems({ termEnd: new Date(Number.NaN) })).toEqual(invalid);
    expect(problems({ termEnd: '2026-12-31' as unknown as Date })).toEqual(invalid);
    expect(problems({ termEnd: NOW })).toEqual(['booking term must end after it starts']);
    expect(problems({ termEnd: new Date(NOW.getTime() + 1) })).toEqual([]);
  });

  it('needs a valid clock', () => expect(problems({}, new Date(Number.NaN))).toEqual(['now must be a valid instant']));

  it('lists every problem at once, in a fixed order', () => {
    expect(problems({ gpu: '', fabric: '', nodes: 0, gpusPerNode: 0, rateUsdPerGpuHour: -1, termEnd: NOW }, new Date(Number.NaN))).toEqual([
      'booking.gpu must name a GPU model',
      'booking.fabric must name a fabric',
      'booking.nodes must be an integer from 1 to 4096',
      'booking.gpusPerNode must be an integer from 1 to 72',
      'booking.rateUsdPerGpuHour must be a non-negative number',
      'booking term must end after it starts',
      'now must be a valid instant',
    ]);
  });
});
