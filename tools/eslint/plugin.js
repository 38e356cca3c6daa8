// @ts-check
/**
 * ESLint plugin `agentd`, the house rules eslint.config.js applies to `src/` and `machines/`:
 * `agentd/layers` (imports follow the layer table, tools/eslint/layers.js) and
 * `agentd/function-budget` (functions stay within the line budget, tools/eslint/function-budget.js).
 */
import functionBudget from './function-budget.js';
import layersPlugin from './layers.js';

export default { rules: { ...layersPlugin.rules, 'function-budget': functionBudget } };
