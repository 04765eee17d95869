// A legacy app in JavaScript, against the WIT world `legacy-app`
// (../../wit): each call returns the old `{"success": ..}` envelope as a
// string, built by hand as such apps did, and the host parses it into a result
// object. New tools use the world `plugin` instead (see ../js-tools).
// `make guests` writes guest-examples/target/lang/js_legacy_app.wasm.

// The app's orders, by id.
const ORDERS = {
  1001: { orderId: '1001', status: 'shipped', total: 12.5 },
  1002: { orderId: '1002', status: 'open', total: 40 },
};

function envelope(value) {
  return JSON.stringify(value);
}

function orderStatus({ orderId }) {
  const order = Object.hasOwn(ORDERS, orderId) ? ORDERS[orderId] : undefined;
  if (order === undefined) {
    return envelope({ success: false, error: { message: `Order ${orderId} does not exist`, code: 'not_found', orderId } });
  }
  return envelope({ success: true, data: order });
}

function orderCancel({ orderId, dryRun }) {
  const order = Object.hasOwn(ORDERS, orderId) ? ORDERS[orderId] : undefined;
  if (order === undefined) {
    return envelope({ success: false, error: { message: `Order ${orderId} does not exist`, code: 'not_found', orderId } });
  }
  if (order.status === 'shipped') {
    return envelope({ success: false, error: `Order ${orderId} has shipped and can no longer be cancelled` });
  }
  if (dryRun) {
    return envelope({ success: true, data: { orderId, status: 'cancelled' }, dryRun: true, preview: { refund: order.total } });
  }
  // Nothing is kept: every call runs in a fresh instance.
  return envelope({ success: true, data: { orderId, status: 'cancelled' } });
}

function orderNote({ orderId }) {
  return `Order ${orderId}: handle with care.`;
}

const ORDER_ID = { orderId: { type: 'string' } };

const TOOLS = [
  {
    name: 'order_status',
    description: 'Returns an order, or a failure envelope with a code when there is none.',
    inputSchema: { properties: ORDER_ID, required: ['orderId'], type: 'object' },
    run: orderStatus,
  },
  {
    name: 'order_cancel',
    description: 'Cancels an open order; with dryRun, previews the refund and changes nothing.',
    inputSchema: {
      properties: { ...ORDER_ID, dryRun: { type: 'boolean' } },
      required: ['orderId'],
      type: 'object',
    },
    run: orderCancel,
  },
  {
    name: 'order_note',
    description: 'Returns plain text instead of an envelope.',
    inputSchema: { properties: ORDER_ID, required: ['orderId'], type: 'object' },
    run: orderNote,
  },
];

export const app = {
  describe() {
    return TOOLS.map((tool) => ({
      name: tool.name,
      title: undefined,
      description: tool.description,
      inputSchema: JSON.stringify(tool.inputSchema),
      outputSchema: undefined,
      annotations: undefined,
      requiredPrivileges: [],
      requiredClientCapabilities: [],
    }));
  },

  call(name, args, _context) {
    const tool = TOOLS.find((t) => t.name === name);
    if (tool === undefined) {
      return envelope({ success: false, error: `Unknown tool: ${name}` });
    }
    return tool.run(JSON.parse(args));
  },
};
