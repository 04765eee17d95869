// toolhost example tools in JavaScript, against the WIT world `plugin`
// (../../wit). componentize-js (SpiderMonkey) turns this module into a
// component: `make guests` writes guest-examples/target/lang/js_tools.wasm.
//
// - word_stats: the tool every example language implements alike
//   (see guest-examples/word-stats); structured data with an output schema.
// - color: structured data, or a coded `not-found` failure.
// - countdown: reports through the host's `log` and `progress` imports.

import { log, progress } from 'toolhost:plugin/host@0.2.0';

// Every schema and data object below lists its keys in alphabetical order, as
// the Rust version's serde_json writes them, so the four versions are
// identical byte for byte.

const WORD_STATS = {
  name: 'word_stats',
  title: 'Word statistics',
  description: 'Counts the words, lines and characters of a text.',
  inputSchema: {
    additionalProperties: false,
    properties: { text: { description: 'The text to count', type: 'string' } },
    required: ['text'],
    type: 'object',
  },
  outputSchema: {
    additionalProperties: false,
    properties: {
      characters: { minimum: 0, type: 'integer' },
      lines: { minimum: 0, type: 'integer' },
      words: { minimum: 0, type: 'integer' },
    },
    required: ['characters', 'lines', 'words'],
    type: 'object',
  },
  readOnly: true,
};

const COLORS = { blue: [0, 0, 255], green: [0, 128, 0], red: [255, 0, 0] };

const COLOR = {
  name: 'color',
  title: 'Color',
  description: 'Looks up a named color: its hex code and RGB components.',
  inputSchema: {
    additionalProperties: false,
    properties: { name: { description: 'A color name such as red', type: 'string' } },
    required: ['name'],
    type: 'object',
  },
  outputSchema: {
    properties: {
      hex: { pattern: '^#[0-9a-f]{6}$', type: 'string' },
      name: { type: 'string' },
      rgb: { items: { maximum: 255, minimum: 0, type: 'integer' }, maxItems: 3, minItems: 3, type: 'array' },
    },
    required: ['hex', 'name', 'rgb'],
    type: 'object',
  },
  readOnly: true,
};

const COUNTDOWN = {
  name: 'countdown',
  title: 'Countdown',
  description: 'Counts down from a number, logging and reporting progress at each step.',
  inputSchema: {
    additionalProperties: false,
    properties: { from: { maximum: 10, minimum: 1, type: 'integer' } },
    required: ['from'],
    type: 'object',
  },
  outputSchema: {
    properties: { counted: { type: 'integer' } },
    required: ['counted'],
    type: 'object',
  },
  readOnly: true,
};

// The WIT record `tool-descriptor` (field names in camelCase; an absent
// option is `undefined`).
function descriptor(tool) {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: JSON.stringify(tool.inputSchema),
    outputSchema: JSON.stringify(tool.outputSchema),
    annotations: { readOnly: tool.readOnly, destructive: undefined, idempotent: undefined, openWorld: undefined },
    requiredPrivileges: [],
    requiredClientCapabilities: [],
  };
}

// A `tool-result` with no content parts, stored links or metadata.
function result(outcome, summary) {
  return {
    outcome,
    summary,
    content: [],
    storedLinks: [],
    metadata: {
      pagination: undefined,
      dryRun: undefined,
      responseSize: undefined,
      query: undefined,
      generatedAt: undefined,
      expiresAt: undefined,
      extensions: [],
    },
  };
}

function success(data, summary) {
  return result({ tag: 'success', val: JSON.stringify(data) }, summary);
}

// `code` is a WIT `error-code` case: 'invalid-arguments', 'missing-privilege',
// 'not-found' or 'tool-error'.
function failure(code, message, details) {
  return result({ tag: 'failure', val: { code, message, details: JSON.stringify(details) } }, undefined);
}

const SPACES = new Set([' ', '\t', '\n', '\v', '\f', '\r']);

// `1 word`, `2 words`.
function counted(n, noun) {
  return n === 1 ? `1 ${noun}` : `${n} ${noun}s`;
}

function wordStats({ text }) {
  let characters = 0;
  let words = 0;
  let lines = 0;
  let inWord = false;
  // for..of walks code points (Unicode scalar values), not UTF-16 units.
  for (const c of text) {
    characters += 1;
    if (c === '\n') lines += 1;
    if (SPACES.has(c)) {
      inWord = false;
    } else if (!inWord) {
      inWord = true;
      words += 1;
    }
  }
  if (text.length > 0 && !text.endsWith('\n')) lines += 1;
  return success(
    { characters, lines, words },
    `${counted(words, 'word')}, ${counted(lines, 'line')}, ${counted(characters, 'character')}`,
  );
}

function color({ name }) {
  const rgb = Object.hasOwn(COLORS, name) ? COLORS[name] : undefined;
  if (rgb === undefined) {
    return failure('not-found', `There is no color named "${name}"; ask for one of the known ones.`, {
      known: Object.keys(COLORS),
      name,
    });
  }
  const hex = '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('');
  return success({ hex, name, rgb }, `${name} is ${hex}`);
}

function countdown({ from }) {
  log('info', `counting down from ${from}`);
  for (let step = 1; step <= from; step += 1) {
    log('debug', `${from - step + 1}`);
    progress(step, from, `step ${step} of ${from}`);
  }
  return success({ counted: from }, `Counted down from ${from}`);
}

const TOOLS = { word_stats: wordStats, color, countdown };

export const tool = {
  describe() {
    return [WORD_STATS, COLOR, COUNTDOWN].map(descriptor);
  },

  call(name, args, _context) {
    const run = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
    if (run === undefined) {
      return failure('invalid-arguments', `This plugin has no tool named \`${name}\`.`, { tool: name });
    }
    // The host validated `args` against the tool's input schema.
    return run(JSON.parse(args));
  },
};
