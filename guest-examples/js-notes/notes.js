// `notes` in JavaScript: a plugin that offers more than tools, against the WIT
// world `full` (../../wit). It is the Rust `notes` example's twin (the same
// notes; no `find_notes`):
//
// - resources: `notes://index` (every note) and the template
//   `notes://note/{slug}` (one note, as Markdown);
// - a prompt, `summarize_note`, that embeds a note and asks for a summary;
// - completions of the `slug` of both;
// - a tool, `pick_note`, that asks the user which note to show (`elicit`).
//
// componentize-js turns it into a component: `make guests` writes
// guest-examples/target/lang/js_notes.wasm. A function whose WIT type is
// `result<T, tool-error>` returns T, or throws `{ payload: <tool-error> }`.

import { elicit } from 'toolhost:plugin/interaction@0.2.0';

const NOTES = [
  [
    'sandbox',
    'The sandbox',
    'Each call runs in a fresh instance. A guest reaches files and the network only as far as the operator grants.',
  ],
  [
    'results',
    'Results',
    'A tool returns typed parts; the host renders them for every protocol revision. Large results travel as links.',
  ],
  [
    'prompts',
    'Prompts and resources',
    'Since toolhost:plugin@0.2.0 a plugin may offer prompts, resources and completions beside its tools.',
  ],
];

const noteUri = (slug) => `notes://note/${slug}`;
const markdown = ([, title, text]) => `# ${title}\n\n${text}\n`;

// The WIT `tool-error` a failure throws (its `details` are JSON text).
function failure(code, message, details) {
  return { payload: { code, message, details: JSON.stringify(details) } };
}

function note(slug) {
  const found = NOTES.find(([s]) => s === slug);
  if (found === undefined) {
    throw failure('not-found', `No note "${slug}"; the notes are: ${NOTES.map(([s]) => s).join(', ')}.`, { slug });
  }
  return found;
}

function result(data, parts) {
  return {
    outcome: { tag: 'success', val: data === undefined ? undefined : JSON.stringify(data) },
    summary: undefined,
    content: parts,
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

const text = (value) => ({ tag: 'text', val: { text: value, mime: undefined } });

// Asks the user to pick a note (a form with one choice) and shows it. The host
// carries the question as the caller's protocol revision allows; a refusal
// (the client cannot be asked) throws, and becomes the call's coded error.
function pickNote() {
  const schema = {
    type: 'object',
    properties: { slug: { type: 'string', title: 'Note', enum: NOTES.map(([slug]) => slug) } },
    required: ['slug'],
  };
  let answer;
  try {
    answer = elicit('Which note shall I show?', JSON.stringify(schema));
  } catch (refused) {
    const { code, message } = refused.payload;
    return {
      ...result(undefined, []),
      outcome: { tag: 'failure', val: { code: 'tool-error', message, details: JSON.stringify({ refusal: code }) } },
    };
  }
  if (answer.tag !== 'accept') {
    return result(undefined, [text('No note picked.')]);
  }
  const found = note(JSON.parse(answer.val).slug);
  const [slug, title] = found;
  return result({ slug, title }, [
    text(markdown(found)),
    {
      tag: 'resource-link',
      val: { uri: noteUri(slug), name: slug, title, description: undefined, mime: 'text/markdown', size: undefined },
    },
  ]);
}

export const tool = {
  describe() {
    return [
      {
        name: 'pick_note',
        title: 'Pick a note',
        description: 'Asks the user which note to show, then shows it.',
        inputSchema: JSON.stringify({ type: 'object', properties: {} }),
        outputSchema: undefined,
        annotations: { readOnly: true, destructive: undefined, idempotent: undefined, openWorld: undefined },
        requiredPrivileges: [],
        requiredClientCapabilities: [],
      },
    ];
  },

  call(name, _args, _context) {
    if (name !== 'pick_note') {
      return {
        ...result(undefined, []),
        outcome: { tag: 'failure', val: { code: 'invalid-arguments', message: `No tool named ${name}.`, details: undefined } },
      };
    }
    return pickNote();
  },
};

export const resources = {
  describe() {
    return [
      {
        uri: 'notes://index',
        name: 'index',
        title: 'All notes',
        description: 'Every note, as Markdown.',
        mime: 'text/markdown',
        size: undefined,
        requiredPrivileges: [],
      },
    ];
  },

  describeTemplates() {
    return [
      {
        uriTemplate: 'notes://note/{slug}',
        name: 'note',
        title: 'One note',
        description: 'One note by its slug, as Markdown.',
        mime: 'text/markdown',
        requiredPrivileges: [],
      },
    ];
  },

  read(uri, _context) {
    const body =
      uri === 'notes://index' ? NOTES.map(markdown).join('\n') : markdown(note(uri.slice('notes://note/'.length)));
    return [{ uri, mime: 'text/markdown', body: { tag: 'text', val: body } }];
  },
};

export const prompts = {
  describe() {
    return [
      {
        name: 'summarize_note',
        title: 'Summarize a note',
        description: 'Asks for a one-sentence summary of a note.',
        arguments: [{ name: 'slug', title: undefined, description: 'Which note: sandbox, results or prompts', required: true }],
        requiredPrivileges: [],
      },
    ];
  },

  get(name, args, _context) {
    if (name !== 'summarize_note') {
      throw failure('not-found', `No prompt named ${name}.`, { name });
    }
    // The host has checked that the required `slug` is there.
    const found = note(args.find(([key]) => key === 'slug')[1]);
    return {
      description: undefined,
      messages: [
        {
          role: 'user',
          content: {
            tag: 'embedded-resource',
            val: { uri: noteUri(found[0]), mime: 'text/markdown', body: { tag: 'text', val: markdown(found) } },
          },
        },
        { role: 'user', content: text('Summarize the note above in one sentence.') },
      ],
    };
  },
};

export const completion = {
  // Slugs that start with what was typed, for the prompt's and the template's `slug`.
  complete(_reference, argument, _resolved, _context) {
    const values = NOTES.map(([slug]) => slug).filter((slug) => argument.name === 'slug' && slug.startsWith(argument.value));
    return { values, total: values.length, hasMore: false };
  },
};

export const tasks = {
  // Every note tool answers at once: none runs as a task.
  describe() {
    return [];
  },
};
