import { planningSchema, type Planning } from '../../src/config/schemas.js';

export const planSchema = (overrides: Partial<Planning>): Planning => planningSchema.parse(overrides);
