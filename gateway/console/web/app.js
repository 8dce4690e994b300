// Pinky web console: the person's side of the gateway in one page.
//
// Stable element ids and classes (tests and people's scripts may rely on
// them; DEVICE, ID, TASK and SEQ are the daemon's ids, unescaped):
//
//   header:    #nav-phones #nav-history #nav-settings (links to #phones,
//              #history, #history/TASK, #settings), #approval-count (pending
//              approvals), #conn (class "live" while live updates work),
//              #stop-all (leases.stop {all:true}), #notice (errors, logout),
//              #history-health (shown while the history cannot be written)
//   phones:    #page-phones, #phones, one article.phone#phone-DEVICE each
//              (class "held" while the person holds it, "offline" when off):
//              canvas.mirror#mirror-DEVICE (the live screen; data-frames counts
//              decoded frames), #mirror-status-DEVICE, #state-DEVICE,
//              #host-DEVICE and its label #host-label-DEVICE (the phone
//              host that serves it, shown for a phone on another machine
//              only; data-state is the host's state: online, offline,
//              pending or unknown; class "down" unless online), #lock-DEVICE,
//              #agent-DEVICE, #task-DEVICE, buttons
//              #takeover-DEVICE #handback-DEVICE #stop-DEVICE, and while held
//              #key-home-DEVICE #key-back-DEVICE #key-app_switch-DEVICE;
//              ul.missing#missing-DEVICE (hidden while the phone lacks
//              nothing its driver can do): li.missing-cap each (data-capability),
//              with span.cap, span.reason (why) and span.fix (how to enable it);
//              p.not-offered#not-offered-DEVICE (hidden unless the phone's
//              driver does not offer some capabilities; data-capabilities
//              lists them, comma-separated)
//   drivers:   #drivers (hidden while no driver needs anything), one
//              article.driver#driver-NAME per driver that does: li.problem
//              each, with span.detail (what is wrong) and span.fix (what to
//              do); #no-phones (how to connect a phone, while there is none);
//              #driver-caps (hidden while no driver runs) with one
//              li.driver-caps#driver-caps-NAME per driver (data-driver):
//              span.caps (what it offers; data-capabilities, comma-separated)
//              and span.lacking (data-lacking = how many of its phones lack
//              some of it, data-phones = how many it has), with an
//              a.phone-link (href #phone-DEVICE) to each such phone's card
//   approvals: #approvals (hidden when none), #approval-list, one
//              article.approval#approval-ID each: div.shot-wrap#shotwrap-ID
//              (class "enlarged" after a tap on it) with img#shot-ID,
//              div.target-box#box-ID, span.countdown#countdown-ID
//              (data-expires), input#reason-ID, buttons #allow-ID
//              #allowtask-ID #deny-ID
//   history:   #page-history, #task-rows with tr.task#task-TASK (checkbox
//              input.task-pick, a.task-link), #export-selected; the task
//              view #task-detail: #task-title, a#export (/export?task=TASK),
//              video#recording (when the task has one), #timeline with
//              button.step-mark (data-at = seconds into the video, data-seq),
//              ol#steps with li.step#step-SEQ (pre.diff, a.shot-before,
//              a.shot-after)
//   settings:  #page-settings, #set-recording, #set-retention, #set-readonly,
//              #settings-save, #settings-status; #unlock-device, #unlock-pin,
//              #unlock-go, #unlock-status
//
// window.pinky.log keeps the page's recent log lines for debugging.
'use strict';

const $ = (id) => document.getElementById(id);
const pinky = (window.pinky = { log: [] });

function log(...args) {
  const line = args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
  pinky.log.push(line);
  if (pinky.log.length > 300) pinky.log.shift();
  console.log('pinky:', line);
}

// show makes text that came from an agent or a phone safe to read, as
// internal/safetext's Text does for the CLI and the export (one table
// tests both): control characters become visible escapes (\x1b, \r,
// \u009b; newlines and tabs stay, the page lays them out), and
// bidirectional controls and the line and paragraph separators become
// ‹U+202E›, so that nothing reorders what the person reads ("$100"
// shown as "$001"). Text reaches the DOM as text only (textContent, text
// nodes), never as markup; every text the page shows goes through show.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
function show(s) {
  return String(s).replace(UNSAFE, (c) => {
    const n = c.charCodeAt(0);
    if (c === '\r') return '\\r';
    if (n < 0x20 || n === 0x7f) return '\\x' + n.toString(16).padStart(2, '0');
    if (n < 0xa0) return '\\u' + n.toString(16).padStart(4, '0');
    return '\u2039U+' + n.toString(16).toUpperCase().padStart(4, '0') + '\u203a';
  });
}

// Attributes whose value the person reads.
const SHOWN_ATTRS = new Set(['title', 'alt', 'placeholder', 'aria-label']);

// h builds an element: h('button', {id: 'x', class: 'y', onclick: f}, 'text', child…).
// Text children and the attributes the person reads go through show; ids,
// values and links stay exact, for the calls they make.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, SHOWN_ATTRS.has(k) ? show(v) : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : show(c));
  }
  return el;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- calls to the daemon ----

let loggedOut = false;

function showNotice(msg) {
  const n = $('notice');
  n.textContent = show(msg);
  n.hidden = !msg;
}

function endSession() {
  if (loggedOut) return;
  loggedOut = true;
  showNotice('You are logged out. Run `pinky open` on this computer to open the console again.');
  for (const m of mirrors.values()) m.close();
  mirrors.clear();
}

async function call(method, params) {
  if (loggedOut) throw new Error('logged out');
  let r;
  try {
    r = await fetch('/api/call', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ method, params: params || {} }),
      credentials: 'same-origin',
    });
  } catch (e) {
    throw new Error('the daemon does not answer');
  }
  if (r.status === 401) {
    endSession();
    throw new Error('logged out');
  }
  let body = null;
  try {
    body = await r.json();
  } catch (e) {
    throw new Error(`${method}: HTTP ${r.status}`);
  }
  if (!r.ok) throw new Error((body && body.error) || `${method}: HTTP ${r.status}`);
  return body;
}

// act runs a call for a button and shows a failure in the notice.
async function act(method, params) {
  try {
    const res = await call(method, params);
    showNotice('');
    return res;
  } catch (e) {
    log(method, 'failed:', e);
    if (!loggedOut) showNotice(`${method}: ${e.message}`);
    throw e;
  }
}

// ---- state ----

const state = {
  devices: [],
  leases: new Map(), // device → lease
  held: new Set(), // devices the person holds
  approvals: new Map(), // id → card
  approvalsLoaded: false, // the first list has been shown (later cards notify)
  hosts: new Map(), // phone host's name → its state, from status
  tasks: [],
  drivers: [], // the drivers, as status gives them
  taskID: '', // the task shown in #task-detail
  page: '',
};
const mirrors = new Map(); // device → Mirror

// ---- phones ----

async function loadPhones() {
  const [devices, leases] = await Promise.all([call('devices.list'), call('leases.list')]);
  state.devices = devices || [];
  state.leases = new Map((leases || []).map((l) => [l.device, l]));
  for (const l of leases || []) if (l.with_person) state.held.add(l.device);
  renderPhones();
  renderDriverCaps();
  renderUnlockDevices();
}

function renderPhones() {
  const box = $('phones');
  const seen = new Set();
  for (const d of state.devices) {
    seen.add(d.id);
    let card = $('phone-' + d.id);
    if (!card) {
      card = phoneCard(d);
      box.append(card);
    }
    updatePhone(d, card);
  }
  for (const card of [...box.children]) {
    if (!seen.has(card.dataset.device)) {
      stopMirror(card.dataset.device);
      card.remove();
    }
  }
  $('no-phones').hidden = state.devices.length > 0;
}

function phoneCard(d) {
  const id = d.id;
  const canvas = h('canvas', { id: 'mirror-' + id, class: 'mirror', width: 360, height: 640, tabindex: 0, dataset: { frames: '0' } });
  const card = h(
    'article',
    { id: 'phone-' + id, class: 'phone', dataset: { device: id } },
    h('h3', { class: 'phone-name' }),
    h('div', { class: 'screen' }, canvas, h('div', { id: 'mirror-status-' + id, class: 'mirror-status' }, 'connecting…')),
    h('div', { class: 'keys buttons', id: 'keys-' + id, hidden: true },
      ['home', 'back', 'app_switch'].map((k) =>
        h('button', { type: 'button', id: `key-${k}-${id}`, onclick: () => sendInput(id, { kind: 'key', key: k }) },
          { home: 'Home', back: 'Back', app_switch: 'Recent apps' }[k]))),
    h('p', { class: 'hint', id: 'hint-' + id, hidden: true },
      'You have this phone: click to tap, drag to swipe, hold to long-press, type to enter text.'),
    h('dl', {},
      h('dt', {}, 'State'), h('dd', { id: 'state-' + id }),
      h('dt', { id: 'host-label-' + id, hidden: true }, 'Host'), h('dd', { id: 'host-' + id, class: 'host', hidden: true }),
      h('dt', {}, 'Lock'), h('dd', { id: 'lock-' + id }),
      h('dt', {}, 'Agent'), h('dd', { id: 'agent-' + id }),
      h('dt', {}, 'Task'), h('dd', { id: 'task-' + id })),
    h('ul', { id: 'missing-' + id, class: 'missing', hidden: true }),
    h('p', { id: 'not-offered-' + id, class: 'not-offered', hidden: true }),
    h('div', { class: 'buttons' },
      h('button', { type: 'button', id: 'takeover-' + id, class: 'primary', onclick: () => takeOver(id) }, 'Take over'),
      h('button', { type: 'button', id: 'handback-' + id, onclick: () => handBack(id) }, 'Hand back'),
      h('button', { type: 'button', id: 'stop-' + id, class: 'danger', onclick: () => stopLease(id) }, 'Stop')),
  );
  attachInput(id, canvas);
  return card;
}

function updatePhone(d, card) {
  const id = d.id;
  const lease = state.leases.get(id);
  const held = state.held.has(id);
  card.querySelector('.phone-name').textContent = show(d.name || d.model || id);
  card.classList.toggle('held', held);
  card.classList.toggle('offline', !d.online);
  $('state-' + id).textContent = show((d.online ? d.state || 'online' : 'offline') + (d.connection ? ` · ${d.connection}` : '') +
    (d.detail && d.state !== 'online' ? ` — ${d.detail}` : ''));
  updateHost(d);
  updateMissing(d);
  $('lock-' + id).textContent = show(d.lock_state || 'unknown');
  $('agent-' + id).textContent = show(lease ? lease.agent + (lease.parked_until ? ' (away)' : '') : '—');
  $('task-' + id).textContent = show(lease ? lease.task || lease.task_id : '—');
  $('takeover-' + id).disabled = held || !d.online;
  $('handback-' + id).disabled = !held;
  $('stop-' + id).disabled = !lease;
  $('keys-' + id).hidden = !held;
  $('hint-' + id).hidden = !held;
  if (d.online && !loggedOut) startMirror(id);
  else stopMirror(id);
  backgroundMirror(id, card, d.online ? lease : null);
}

// updateHost shows the phone host that serves a phone on another machine,
// and the host's state as status gives it (`pinky hosts list`): online, or
// offline since when, and its version. A phone on this machine shows none.
function updateHost(d) {
  const dd = $('host-' + d.id);
  if (!dd) return;
  const remote = !!d.host;
  dd.hidden = $('host-label-' + d.id).hidden = !remote;
  if (!remote) {
    dd.textContent = '';
    delete dd.dataset.state;
    return;
  }
  const host = state.hosts.get(d.host);
  let text = d.host;
  if (host) {
    text += ' · ' + (host.state === 'offline' && host.since ? `offline since ${fmtTime(host.since)}` : host.state);
    if (host.version) text += ` · version ${host.version}`;
  }
  dd.textContent = show(text);
  dd.dataset.state = host ? host.state : 'unknown';
  dd.classList.toggle('down', !!host && host.state !== 'online');
}

// CAP_NAMES names the capabilities a phone may lack for a person; another
// shows as the driver names it.
const CAP_NAMES = {
  input: 'Tap and type', video: 'Live video', frame_capture: 'Fast screen pictures', wake: 'Waking the screen',
  unlock: 'Unlocking with the saved PIN', lock_events: 'Lock state', wait_idle: 'Waiting for the screen to settle',
  apps: 'The list of apps', files: 'The Pinky folder', displays: 'Background displays', notifications: 'Notifications',
  pinch: 'Pinch to zoom',
};

// updateMissing lists what the phone cannot do of what its driver can,
// each with why and how the person can enable it, as the phone says.
function updateMissing(d) {
  const ul = $('missing-' + d.id);
  if (!ul) return;
  const missing = d.missing || [];
  ul.replaceChildren(...missing.map((m) => h('li', { class: 'missing-cap', dataset: { capability: m.capability } },
    h('span', { class: 'cap' }, 'No ' + capName(m.capability)),
    m.reason ? [': ', h('span', { class: 'reason' }, m.reason)] : null,
    m.fix ? ['. To enable it: ', h('span', { class: 'fix' }, m.fix)] : null)));
  ul.hidden = missing.length === 0;
  const p = $('not-offered-' + d.id);
  const no = d.not_offered || [];
  p.dataset.capabilities = no.join(',');
  p.textContent = no.length ? show(`Its driver (${d.driver}) does not offer: ${no.map(capName).join(', ')}.`) : '';
  p.hidden = no.length === 0;
  // A phone that showed pictures for want of video shows live video as
  // soon as it serves video again, rather than at its mirror's next retry.
  const lacked = lackedVideo.get(d.id);
  const lacks = missing.some((m) => m.capability === 'video');
  lackedVideo.set(d.id, lacks);
  if (lacked && !lacks) {
    for (const m of mirrors.values()) if (m.device === d.id) m.reopen();
  }
}

// lackedVideo says, per phone, whether its card last said it lacks video.
const lackedVideo = new Map();

// capName is a capability's name for a person.
function capName(c) {
  return (CAP_NAMES[c] || c).toLowerCase();
}

function refreshPhone(id) {
  const d = state.devices.find((x) => x.id === id);
  const card = $('phone-' + id);
  if (d && card) updatePhone(d, card);
}

async function takeOver(id) {
  try {
    await act('devices.takeover', { device: id });
  } catch (e) {
    return;
  }
  state.held.add(id);
  refreshPhone(id);
  schedule('phones');
}

async function handBack(id) {
  try {
    await act('devices.handback', { device: id });
  } catch (e) {
    return;
  }
  state.held.delete(id);
  refreshPhone(id);
  schedule('phones');
}

async function stopLease(id) {
  await act('leases.stop', { device: id }).catch(() => {});
  schedule('phones');
}

async function stopAll() {
  await act('leases.stop', { all: true }).catch(() => {});
  schedule('phones');
}

// ---- the mirror: WebSocket packets → WebCodecs → canvas ----

const FLAG_CONFIG = 1;
const FLAG_KEY = 2;
// A mirror without video shows a picture of the screen instead: the first
// STILL_AFTER_MS after it opened, then every STILL_EVERY_MS.
const STILL_AFTER_MS = 2500;
const STILL_EVERY_MS = 2000;

// avcCodec reads "avc1.PPCCLL" from the SPS in an Annex B config packet.
function avcCodec(data) {
  for (let i = 0; i + 4 < data.length; i++) {
    if (data[i] === 0 && data[i + 1] === 0 && data[i + 2] === 1 && (data[i + 3] & 0x1f) === 7 && i + 6 < data.length) {
      const hex = (b) => b.toString(16).padStart(2, '0').toUpperCase();
      return 'avc1.' + hex(data[i + 4]) + hex(data[i + 5]) + hex(data[i + 6]);
    }
  }
  return '';
}

function concatBytes(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function sameBytes(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

class Mirror {
  // key names the canvas (mirror-KEY) and status (mirror-status-KEY): the
  // device id for its own screen, DEVICE~dN for its background display N.
  constructor(key, device, display) {
    this.key = key;
    this.device = device;
    this.display = display || 0;
    this.canvas = $('mirror-' + key);
    this.ctx = this.canvas.getContext('2d');
    this.decoder = null;
    this.config = null; // the last config packet's data (SPS/PPS, Annex B)
    this.codec = '';
    this.needKey = true;
    this.width = 0; // the video's size, from the packets
    this.height = 0;
    this.frames = 0;
    this.retries = 0;
    this.closed = false;
    this.stills = 0; // pictures shown while no video comes
    this.stillTimer = null;
    this.open();
  }

  status(msg) {
    const el = $('mirror-status-' + this.key);
    if (!el) return;
    el.textContent = show(msg);
    el.hidden = !msg;
  }

  open() {
    if (this.closed) return;
    if (typeof VideoDecoder === 'undefined') {
      this.status('This browser cannot decode video (no WebCodecs).');
      return;
    }
    const q = this.display ? `?display=${this.display}` : '';
    const ws = new WebSocket(`ws://${location.host}/ws/mirror/${encodeURIComponent(this.device)}${q}`);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onmessage = (e) => {
      try {
        this.packet(e.data);
      } catch (err) {
        log('mirror', this.device, 'packet:', err);
      }
    };
    // No video yet a moment after opening (an iPhone whose broadcast is not
    // running, a driver without video): show pictures until it comes.
    clearTimeout(this.waitTimer);
    this.waitTimer = setTimeout(() => { if (!this.frames) this.startStills(); }, STILL_AFTER_MS);
    ws.onclose = (e) => {
      this.resetDecoder();
      if (this.closed) return;
      log('mirror', this.device, 'closed:', e.code, e.reason);
      if (!this.frames) this.startStills();
      this.status(e.reason || 'Mirror disconnected; retrying…');
      const wait = Math.min(10000, 1000 * 2 ** this.retries++);
      this.timer = setTimeout(() => this.open(), wait);
    };
  }

  // reopen opens the mirror again at once, without waiting for the
  // retry's backoff: the phone says it serves video now (updateMissing).
  // A mirror that shows video already is left alone.
  reopen() {
    if (this.closed || this.frames) return;
    clearTimeout(this.timer);
    clearTimeout(this.waitTimer);
    this.retries = 0;
    const ws = this.ws;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      ws.onclose = null; // this is no disconnection to retry after
      ws.onmessage = null;
      ws.close(1000, 'reopened by the page');
    }
    this.resetDecoder();
    log('mirror', this.device, 'reopened: the phone serves video');
    this.open();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.waitTimer);
    clearTimeout(this.stillTimer);
    if (this.ws) this.ws.close(1000, 'closed by the page');
    this.resetDecoder();
  }

  // startStills shows a picture of the screen every STILL_EVERY_MS until
  // the first video frame or the mirror's end.
  startStills() {
    if (this.stillTimer || this.closed || this.frames) return;
    const q = this.display ? `?display=${this.display}` : '';
    const next = async () => {
      if (this.closed || this.frames) {
        this.stillTimer = null;
        return;
      }
      try {
        const r = await fetch(`/still/${encodeURIComponent(this.device)}${q}`, { cache: 'no-store' });
        if (r.ok) {
          const img = await createImageBitmap(await r.blob());
          if (!this.frames && !this.closed) {
            const c = this.canvas;
            if (c.width !== img.width || c.height !== img.height) {
              c.width = img.width;
              c.height = img.height;
            }
            this.ctx.drawImage(img, 0, 0);
            this.stills++;
            c.dataset.stills = String(this.stills);
            this.status('No video from the phone: a picture every few seconds (an iPhone shows live video once its broadcast runs).');
          }
          img.close();
        }
      } catch (err) {
        log('mirror', this.device, 'still:', err);
      }
      this.stillTimer = setTimeout(next, STILL_EVERY_MS);
    };
    this.stillTimer = setTimeout(next, 0);
  }

  resetDecoder() {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = null;
    this.config = null;
    this.needKey = true;
  }

  configure() {
    if (!this.decoder || this.decoder.state === 'closed') {
      this.decoder = new VideoDecoder({
        output: (frame) => this.draw(frame),
        error: (e) => {
          log('mirror', this.device, 'decoder error:', e);
          this.status('Video decoder error: ' + e.message);
          this.decoder = null;
          this.needKey = true;
        },
      });
    }
    // No description: the decoder takes Annex B, parameter sets in band.
    this.decoder.configure({ codec: this.codec, optimizeForLatency: true });
    this.needKey = true;
    log('mirror', this.device, 'configured', this.codec, this.width + 'x' + this.height);
  }

  packet(buf) {
    const dv = new DataView(buf);
    const flags = dv.getUint8(0);
    const w = dv.getUint32(1);
    const hgt = dv.getUint32(5);
    const pts = Number(dv.getBigInt64(9));
    const n = dv.getUint8(17);
    const codecName = new TextDecoder().decode(new Uint8Array(buf, 18, n));
    const data = new Uint8Array(buf, 18 + n);
    if (w > 0 && hgt > 0) {
      this.width = w;
      this.height = hgt;
    }
    if (flags & FLAG_CONFIG) {
      if (codecName !== 'h264') {
        this.status(`The console cannot show ${codecName || 'this'} video yet.`);
        return;
      }
      const codec = avcCodec(data);
      if (!codec) return;
      const changed = codec !== this.codec || !sameBytes(this.config, data);
      this.codec = codec;
      this.config = data.slice();
      if (changed || !this.decoder || this.decoder.state !== 'configured') this.configure();
      return;
    }
    const key = (flags & FLAG_KEY) !== 0;
    if (key && this.config && (!this.decoder || this.decoder.state !== 'configured')) this.configure();
    if (!this.decoder || this.decoder.state !== 'configured') return;
    if (this.needKey && !key) return; // feed a key frame first
    this.needKey = false;
    const chunk = new EncodedVideoChunk({
      type: key ? 'key' : 'delta',
      timestamp: pts,
      data: key && this.config ? concatBytes(this.config, data) : data,
    });
    this.decoder.decode(chunk);
  }

  draw(frame) {
    try {
      const c = this.canvas;
      if (c.width !== frame.displayWidth || c.height !== frame.displayHeight) {
        c.width = frame.displayWidth;
        c.height = frame.displayHeight;
      }
      this.ctx.drawImage(frame, 0, 0, c.width, c.height);
      this.frames++;
      c.dataset.frames = String(this.frames);
      if (this.frames === 1) {
        this.status('');
        clearTimeout(this.stillTimer); // video came: no more pictures
        this.stillTimer = null;
      }
      this.retries = 0;
    } finally {
      frame.close();
    }
  }
}

function startMirror(id, display) {
  const key = display ? `${id}~d${display}` : id;
  if (!mirrors.has(key) && $('mirror-' + key)) mirrors.set(key, new Mirror(key, id, display));
}

// backgroundMirror shows the background display a phone's task runs on, if
// any (#bg-DEVICE, canvas #mirror-DEVICE~dN): the person watches it while
// keeping the phone's own screen.
function backgroundMirror(id, card, lease) {
  const display = lease && lease.display ? lease.display : 0;
  let box = $('bg-' + id);
  if (box && Number(box.dataset.display) !== display) {
    stopMirror(`${id}~d${box.dataset.display}`);
    box.remove();
    box = null;
  }
  if (!display) return;
  if (!box) {
    const key = `${id}~d${display}`;
    box = h('div', { id: 'bg-' + id, class: 'background', dataset: { display: String(display) } },
      h('h4', {}, `Background display ${display}: the agent's task`),
      h('div', { class: 'screen' },
        h('canvas', { id: 'mirror-' + key, class: 'mirror', width: 360, height: 640, dataset: { frames: '0' } }),
        h('div', { id: 'mirror-status-' + key, class: 'mirror-status' }, 'connecting…')));
    card.querySelector('.screen').after(box);
  }
  if (!loggedOut) startMirror(id, display);
}

function stopMirror(id) {
  const m = mirrors.get(id);
  if (m) m.close();
  mirrors.delete(id);
}

// ---- the person's input on a held phone ----

// toPhone maps a point in the page to the phone screen's pixels.
function toPhone(id, canvas, clientX, clientY) {
  const r = canvas.getBoundingClientRect();
  const m = mirrors.get(id);
  const w = (m && m.width) || canvas.width;
  const hgt = (m && m.height) || canvas.height;
  const x = Math.round(((clientX - r.left) * w) / r.width);
  const y = Math.round(((clientY - r.top) * hgt) / r.height);
  return { x: Math.min(Math.max(x, 0), w - 1), y: Math.min(Math.max(y, 0), hgt - 1) };
}

// sendInput sends the person's input; x and y are in the video's pixels,
// and width and height (the video's size) let the daemon scale them to the
// phone's screen, which may be larger than its video.
async function sendInput(id, input) {
  if (!state.held.has(id)) return;
  const m = mirrors.get(id);
  const size = m && m.width && m.height && input.kind !== 'key' && input.kind !== 'type' ? { width: m.width, height: m.height } : {};
  await act('devices.input', { device: id, ...input, ...size }).catch(() => {});
}

const KEYS = { Enter: 'enter', Backspace: 'delete', Escape: 'back', Home: 'home' };
const LONG_PRESS_MS = 500;
const DRAG_PX = 8;

function attachInput(id, canvas) {
  let down = null;
  canvas.addEventListener('pointerdown', (e) => {
    if (!state.held.has(id) || e.button !== 0) return;
    e.preventDefault();
    // Without preventScroll, a mirror partly out of view scrolls into it
    // between the press and the release, and the tap lands elsewhere.
    canvas.focus({ preventScroll: true });
    try {
      canvas.setPointerCapture(e.pointerId);
    } catch (err) {
      /* a synthetic pointer has no capture */
    }
    down = { x: e.clientX, y: e.clientY, t: performance.now() };
  });
  canvas.addEventListener('pointerup', (e) => {
    if (!down) return;
    const d = down;
    down = null;
    const a = toPhone(id, canvas, d.x, d.y);
    const ms = Math.round(performance.now() - d.t);
    if (Math.hypot(e.clientX - d.x, e.clientY - d.y) > DRAG_PX) {
      const b = toPhone(id, canvas, e.clientX, e.clientY);
      sendInput(id, { kind: 'swipe', x: a.x, y: a.y, x2: b.x, y2: b.y, duration_ms: Math.max(ms, 50) });
    } else if (ms >= LONG_PRESS_MS) {
      sendInput(id, { kind: 'long_press', x: a.x, y: a.y, duration_ms: ms });
    } else {
      sendInput(id, { kind: 'tap', x: a.x, y: a.y });
    }
  });
  canvas.addEventListener('pointercancel', () => {
    down = null;
  });
  canvas.addEventListener('keydown', (e) => {
    if (!state.held.has(id) || e.ctrlKey || e.metaKey || e.altKey) return;
    if (KEYS[e.key]) {
      e.preventDefault();
      sendInput(id, { kind: 'key', key: KEYS[e.key] });
    } else if (e.key.length === 1) {
      e.preventDefault();
      sendInput(id, { kind: 'type', text: e.key });
    }
  });
}

// ---- approvals ----

async function loadApprovals() {
  const cards = (await call('approvals.list', {})) || [];
  const open = new Set();
  for (const c of cards) {
    if (c.status && c.status !== 'pending') continue;
    open.add(c.id);
    if (!state.approvals.has(c.id)) {
      addApproval(c);
      // The cards there when the page opened are in view; a later one may
      // open while the person looks at another window.
      if (state.approvalsLoaded) notifyBrowser(c);
    }
  }
  for (const id of [...state.approvals.keys()]) if (!open.has(id)) removeApproval(id);
  state.approvalsLoaded = true;
}

// notifyBrowser tells the person of a new approval through the browser's
// own notifications, once they allowed them (the browser asks at their
// first click in the console). The text is the card's, as plain text.
function notifyBrowser(c) {
  if (!('Notification' in window) || Notification.permission !== 'granted') return;
  try {
    const n = new Notification(`Pinky: ${c.agent || 'an agent'} asks you`, {
      body: (c.summary || `${c.tool} (${c.commit || 'an action'})`) + (c.device ? ` on ${c.device}` : ''),
      tag: 'pinky-approval-' + c.id,
    });
    n.onclick = () => { window.focus(); location.hash = '#phones'; n.close(); };
  } catch (e) {
    log('notification: ' + e);
  }
}

// The browser asks whether the console may notify at the person's first
// click, a gesture it accepts a request from.
document.addEventListener('click', () => {
  if ('Notification' in window && Notification.permission === 'default') Notification.requestPermission();
}, { once: true });

function addApproval(c) {
  state.approvals.set(c.id, c);
  const id = c.id;
  let shot = null;
  if (c.screenshot) {
    const img = h('img', { id: 'shot-' + id, src: '/media/' + encodeURIComponent(c.screenshot), alt: 'The screen when the agent asked' });
    img.addEventListener('error', () => img.closest('.shot-wrap').replaceChildren(h('p', { class: 'status' }, 'No screenshot')));
    const box = h('div', { id: 'box-' + id, class: 'target-box', hidden: true });
    shot = h('div', { class: 'shot-wrap', id: 'shotwrap-' + id, role: 'button', tabindex: 0, title: 'Tap to enlarge' },
      h('div', { class: 'shot' }, img, box));
    enlargeable(shot, img);
    if (Array.isArray(c.target_box) && c.target_box.length === 4) {
      const place = (sw, sh) => {
        if (!sw || !sh) return;
        const [x, y, w, hh] = c.target_box;
        box.style.left = (100 * x) / sw + '%';
        box.style.top = (100 * y) / sh + '%';
        box.style.width = (100 * w) / sw + '%';
        box.style.height = (100 * hh) / sh + '%';
        box.hidden = false;
      };
      if (Array.isArray(c.screen_size) && c.screen_size.length === 2) place(c.screen_size[0], c.screen_size[1]);
      else img.addEventListener('load', () => place(img.naturalWidth, img.naturalHeight));
    }
  }
  const decide = async (allow, forTask) => {
    const reason = $('reason-' + id).value.trim();
    for (const b of card.querySelectorAll('button')) b.disabled = true;
    try {
      await act('approvals.decide', { id, allow, for_task: forTask, reason: allow ? '' : reason });
      removeApproval(id);
    } catch (e) {
      for (const b of card.querySelectorAll('button')) b.disabled = false;
    }
  };
  const card = h(
    'article',
    { id: 'approval-' + id, class: 'approval', dataset: { id } },
    shot,
    h('div', { class: 'approval-body' },
      h('h3', {}, h('span', { class: 'agent' }, c.agent || 'An agent'), ' wants to ', h('span', { class: 'tool' }, c.tool),
        c.device ? ` on ${c.device}` : ''),
      c.summary ? h('p', { class: 'summary', id: 'summary-' + id }, h('strong', {}, c.summary)) : null,
      c.target ? h('p', { class: 'target' }, 'Target: ', h('code', {}, c.target)) : null,
      c.task ? h('p', { class: 'task' }, 'Task: ', c.task) : null,
      c.commit ? h('p', { class: 'commit' }, 'Looks like: ', h('strong', {}, c.commit), c.evidence ? ` (${c.evidence})` : '') : null,
      c.args ? h('pre', { class: 'args' }, c.args) : null,
      h('p', {}, 'Answer within ', h('span', { id: 'countdown-' + id, class: 'countdown', dataset: { expires: c.expires_at || '' } }, '…')),
      c.for_task_covers ? h('p', { class: 'for-task', id: 'fortask-' + id }, 'Allow for this task also allows ', c.for_task_covers, '.') : null,
      h('input', { id: 'reason-' + id, type: 'text', placeholder: 'Reason, if you deny (the agent sees it)' }),
      h('div', { class: 'buttons' },
        h('button', { type: 'button', id: 'allow-' + id, class: 'allow', onclick: () => decide(true, false) }, 'Allow'),
        h('button', { type: 'button', id: 'allowtask-' + id, title: c.for_task_covers ? 'Also allows ' + c.for_task_covers : '', onclick: () => decide(true, true) }, 'Allow for this task'),
        h('button', { type: 'button', id: 'deny-' + id, class: 'danger', onclick: () => decide(false, false) }, 'Deny'))),
  );
  $('approval-list').prepend(card);
  tickCountdowns();
  updateApprovalCount();
}

// enlargeable makes a tap (a click, Enter or Space) on a card's screenshot
// show it as large as the window allows, over the page, and the next tap
// or Escape put it back. The picture's size is set in pixels, so the
// target box (in percent of it) stays on what it outlines.
function enlargeable(wrap, img) {
  const toggle = (on) => {
    if (on && !wrap.contains(img)) return; // the screenshot did not load
    wrap.classList.toggle('enlarged', on);
    wrap.title = on ? 'Tap to close' : 'Tap to enlarge';
    img.style.width = img.style.height = '';
    if (on && img.naturalWidth && img.naturalHeight) {
      const pad = 16;
      const k = Math.min((window.innerWidth - pad) / img.naturalWidth, (window.innerHeight - pad) / img.naturalHeight);
      img.style.width = Math.floor(img.naturalWidth * k) + 'px';
      img.style.height = Math.floor(img.naturalHeight * k) + 'px';
    }
  };
  wrap.addEventListener('click', () => toggle(!wrap.classList.contains('enlarged')));
  wrap.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      toggle(!wrap.classList.contains('enlarged'));
    } else if (e.key === 'Escape') toggle(false);
  });
}

function removeApproval(id) {
  state.approvals.delete(id);
  const card = $('approval-' + id);
  if (card) card.remove();
  updateApprovalCount();
}

function updateApprovalCount() {
  const n = state.approvals.size;
  $('approvals').hidden = n === 0;
  const badge = $('approval-count');
  badge.hidden = n === 0;
  badge.textContent = n === 1 ? '1 approval' : `${n} approvals`;
  document.title = n ? `(${n}) Pinky` : 'Pinky';
}

function tickCountdowns() {
  const now = Date.now();
  for (const el of document.querySelectorAll('.countdown')) {
    const exp = Date.parse(el.dataset.expires);
    if (!exp) {
      el.textContent = '—';
      continue;
    }
    const s = Math.max(0, Math.round((exp - now) / 1000));
    el.textContent = s > 0 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}` : 'expired';
    el.classList.toggle('soon', s <= 10);
  }
}

// ---- history ----

function fmtTime(t) {
  if (!t) return '';
  const d = new Date(t);
  return isNaN(d) ? '' : d.toLocaleString();
}

function fmtSeconds(s) {
  return `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
}

async function loadTasks() {
  state.tasks = (await call('tasks.list', { limit: 50 })) || [];
  const rows = $('task-rows');
  rows.replaceChildren(
    ...state.tasks.map((t) =>
      h('tr', { id: 'task-' + t.id, class: 'task' },
        h('td', {}, h('input', { type: 'checkbox', class: 'task-pick', value: t.id, 'aria-label': 'Select for export', onchange: updateExportSelected })),
        h('td', {}, h('a', { class: 'task-link', href: '#history/' + encodeURIComponent(t.id) }, t.text || t.id)),
        h('td', {}, t.agent),
        h('td', {}, t.device_name || t.device),
        h('td', {}, fmtTime(t.started_at)),
        h('td', {}, String(t.steps)),
        h('td', {}, t.outcome || (t.ended_at ? '' : 'running')))),
  );
  $('no-tasks').hidden = state.tasks.length > 0;
  updateExportSelected();
}

function updateExportSelected() {
  const picked = [...document.querySelectorAll('.task-pick:checked')].map((c) => c.value);
  const a = $('export-selected');
  a.hidden = picked.length === 0;
  a.href = '/export?' + picked.map((id) => 'task=' + encodeURIComponent(id)).join('&');
}

// joinLinks puts ' · ' between the links that are there.
function joinLinks(links) {
  const out = [];
  for (const l of links.filter(Boolean)) out.push(out.length ? ' · ' : '', l);
  return out;
}

function argsView(args) {
  const text = typeof args === 'string' ? args : JSON.stringify(args);
  return text && text !== 'null' && text !== '{}' ? h('pre', { class: 'args' }, text) : null;
}

function diffView(diff) {
  return h('pre', { class: 'diff' },
    diff.split('\n').map((line) =>
      h('span', { class: line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : '' }, line + '\n')));
}

async function loadTask(id) {
  const t = await call('tasks.show', { id });
  if (state.taskID !== id) return; // the person went elsewhere
  renderTask(t);
}

function renderTask(t) {
  const box = $('task-detail');
  const enc = encodeURIComponent(t.id);
  // Keep the video across live updates of the same task: rebuilding it
  // would stop playback.
  if (box.dataset.task !== t.id) {
    box.dataset.task = t.id;
    box.replaceChildren(
      h('p', {}, h('a', { id: 'back-to-tasks', href: '#history' }, '← All tasks')),
      h('h2', { id: 'task-title' }),
      h('p', { id: 'task-meta', class: 'status' }),
      h('p', {}, h('a', { id: 'export', class: 'button', href: '/export?task=' + enc, download: '' }, 'Export report')),
      h('div', { id: 'recording-box' }),
      h('div', { id: 'timeline' }),
      h('ol', { id: 'steps' }),
      h('div', { id: 'task-approvals' }),
    );
  }
  $('task-title').textContent = show(t.text || t.id);
  $('task-meta').textContent = show(`${t.agent} on ${t.device_name || t.device} · started ${fmtTime(t.started_at)}` +
    (t.ended_at ? ` · ended ${fmtTime(t.ended_at)}` : ' · running') + (t.outcome ? ` · ${t.outcome}` : ''));
  const recBox = $('recording-box');
  if (t.recording && !$('recording')) {
    recBox.replaceChildren(h('video', { id: 'recording', controls: true, preload: 'metadata', src: `/recordings/${enc}.mp4` }));
  } else if (!t.recording) {
    recBox.replaceChildren();
  }
  const steps = t.step_list || [];
  const marks = t.recording ? steps.filter((s) => typeof s.video_at_ms === 'number' && s.video_at_ms >= 0) : [];
  $('timeline').replaceChildren(
    ...marks.map((s) => {
      const at = s.video_at_ms / 1000;
      return h('button', { type: 'button', class: 'step-mark', title: `Step ${s.seq}: ${s.tool}`, dataset: { at: String(at), seq: String(s.seq) }, onclick: () => seek(at, s.seq) },
        `${s.seq} ${s.tool} · ${fmtSeconds(at)}`);
    }),
  );
  $('steps').replaceChildren(
    ...steps.map((s) =>
      h('li', { id: 'step-' + s.seq, class: 'step', value: s.seq },
        h('div', {}, h('strong', {}, s.tool), ' ',
          h('span', { class: s.outcome === 'ok' ? 'outcome-ok' : 'outcome-bad' }, s.outcome), ' ',
          h('span', { class: 'status' }, `${fmtTime(s.started_at)} · ${s.duration_ms} ms`)),
        argsView(s.args),
        s.message ? h('p', { class: 'message' }, s.message) : null,
        s.diff ? diffView(s.diff) : null,
        h('p', {}, joinLinks([
          s.before ? h('a', { class: 'shot-before', href: '/media/' + encodeURIComponent(s.before), target: '_blank', rel: 'noopener' }, 'Screen before') : null,
          s.after ? h('a', { class: 'shot-after', href: '/media/' + encodeURIComponent(s.after), target: '_blank', rel: 'noopener' }, 'Screen after') : null,
          t.recording && s.video_at_ms >= 0 ? h('a', { href: '#', class: 'step-seek', onclick: (e) => { e.preventDefault(); seek(s.video_at_ms / 1000, s.seq); } }, 'Watch') : null,
        ])))),
  );
  const apps = t.approvals || [];
  $('task-approvals').replaceChildren(
    ...(apps.length ? [h('h3', {}, 'Approvals')] : []),
    ...apps.map((a) => h('p', { class: 'task-approval' },
      a.summary ? h('strong', {}, a.summary + ' — ') : null,
      `${a.tool} ${a.target || ''}: ${a.status}` + (a.reason ? ` (${a.reason})` : ''),
      a.screenshot ? h('a', { class: 'approval-shot', href: '/media/' + encodeURIComponent(a.screenshot), target: '_blank', rel: 'noopener' }, ' The screen when asked') : null)),
  );
}

function seek(at, seq) {
  const v = $('recording');
  if (!v) return;
  v.currentTime = at;
  for (const el of document.querySelectorAll('.step-mark.current, .step.current')) el.classList.remove('current');
  const mark = document.querySelector(`.step-mark[data-seq="${seq}"]`);
  if (mark) mark.classList.add('current');
  const step = $('step-' + seq);
  if (step) step.classList.add('current');
}

// ---- settings ----

async function loadSettings() {
  const s = await call('settings.get', {});
  $('set-recording').checked = !!s.recording;
  $('set-retention').value = s.retention_days || 0;
  $('set-readonly').checked = !!s.read_only;
}

async function saveSettings(e) {
  e.preventDefault();
  const status = $('settings-status');
  try {
    const s = await call('settings.set', {
      recording: $('set-recording').checked,
      retention_days: parseInt($('set-retention').value, 10) || 0,
      read_only: $('set-readonly').checked,
    });
    if (s) {
      $('set-recording').checked = !!s.recording;
      $('set-retention').value = s.retention_days || 0;
      $('set-readonly').checked = !!s.read_only;
    }
    status.textContent = 'Saved.';
    status.classList.remove('error');
  } catch (err) {
    status.textContent = show(err.message);
    status.classList.add('error');
  }
}

function renderUnlockDevices() {
  const sel = $('unlock-device');
  const cur = sel.value;
  sel.replaceChildren(...state.devices.map((d) => h('option', { value: d.id }, `${d.name || d.model || d.id} (${d.lock_state || 'unknown'})`)));
  if (cur) sel.value = cur;
}

async function unlock(e) {
  e.preventDefault();
  const pin = $('unlock-pin');
  const status = $('unlock-status');
  const params = { device: $('unlock-device').value, pin: pin.value };
  pin.value = ''; // the PIN lives no longer than this call
  try {
    await call('devices.unlock', params);
    status.textContent = 'Unlocked.';
    status.classList.remove('error');
  } catch (err) {
    status.textContent = show(err.message);
    status.classList.add('error');
  }
  params.pin = '';
  schedule('phones');
}

// ---- live updates ----

const pending = new Map(); // what → timer

// schedule reloads a part of the page soon, once for a burst of events.
function schedule(what) {
  if (pending.has(what)) return;
  pending.set(what, setTimeout(async () => {
    pending.delete(what);
    try {
      await reload(what);
    } catch (e) {
      log('reload', what, e);
    }
  }, 150));
}

// ---- the daemon's health: the history and the drivers ----

// loadHealth shows what the person must fix: #history-health while the
// history cannot be written, #drivers while a driver lacks what it needs.
async function loadHealth() {
  const [st, checks] = await Promise.all([
    call('status'),
    // The checks are extra detail: without them the rest still shows.
    call('drivers.checks').catch((e) => { log('drivers.checks', e); return []; }),
  ]);
  renderHistoryHealth((st && st.history) || {});
  renderDrivers((st && st.drivers) || [], checks || []);
  state.drivers = (st && st.drivers) || [];
  renderDriverCaps();
  state.hosts = new Map(((st && st.hosts && st.hosts.hosts) || []).map((x) => [x.name, x]));
  for (const d of state.devices) updateHost(d);
}

// A driver in one of these states serves calls; any other state (failed,
// restarting, exited…) is a problem of its own, as `pinky doctor` says.
const DRIVER_RUNS = new Set(['running', 'attached', 'starting']);

// renderDrivers shows, under each driver that needs something, the same
// problems and fixes as `pinky doctor` and `pinky drivers`: why a driver
// does not run, or the failing checks it reports of itself (adb missing,
// no scrcpy server, WebDriverAgent not answering…), rather than a quiet
// "running, 0 phones".
function renderDrivers(drivers, checks) {
  const problem = (detail, fix) => h('li', { class: 'problem' },
    h('span', { class: 'detail' }, detail),
    fix ? h('span', { class: 'fix' }, 'To fix: ', fix) : null);
  const cards = [];
  for (const d of drivers) {
    const items = [];
    if (!DRIVER_RUNS.has(d.state)) {
      const last = (d.stderr || []).at(-1);
      items.push(problem(`It is ${d.state}${d.last_error ? ': ' + d.last_error : ''}${last ? '; it last wrote: ' + last : ''}`,
        `correct what it says, then run \`pinky driver restart ${d.name}\``));
    } else {
      for (const c of checks) if (c.driver === d.name && !c.ok) items.push(problem(c.detail, c.fix));
    }
    if (!items.length) continue;
    cards.push(h('article', { id: 'driver-' + d.name, class: 'driver', dataset: { driver: d.name } },
      h('h3', {}, `The ${d.name} driver needs you`),
      h('p', { class: 'status' }, `${d.state}, ${d.devices || 0} phones`),
      h('ul', {}, items)));
  }
  const box = $('drivers');
  box.replaceChildren(...cards);
  box.hidden = cards.length === 0;
}

// renderDriverCaps shows, for each driver, what it offers and how many of
// its phones lack some of it, with a link to each such phone's card (which
// says why and how to enable it).
function renderDriverCaps() {
  const items = state.drivers.map((d) => {
    const phones = state.devices.filter((x) => x.driver === d.name);
    const lacking = phones.filter((x) => (x.missing || []).length > 0);
    const caps = d.capabilities || [];
    return h('li', { id: 'driver-caps-' + d.name, class: 'driver-caps', dataset: { driver: d.name } },
      h('strong', { class: 'name' }, d.name),
      ': ',
      h('span', { class: 'caps', dataset: { capabilities: caps.join(',') } },
        caps.length ? 'offers ' + caps.map(capName).join(', ') : 'offers nothing beyond reading the screen'),
      '. ',
      h('span', { class: 'lacking', dataset: { lacking: String(lacking.length), phones: String(phones.length) } },
        lacking.length ? `${lacking.length} of its ${phones.length} phones lack some of it: ` : `${phones.length} phones, none lacking any of it`,
        lacking.flatMap((x, i) => [i ? ', ' : '',
          h('a', { class: 'phone-link', href: '#phone-' + encodeURIComponent(x.id) }, x.name || x.model || x.id)])));
  });
  $('driver-caps-list').replaceChildren(...items);
  $('driver-caps').hidden = items.length === 0;
}

// renderHistoryHealth shows #history-health while the history cannot be
// written: agents' actions are refused meanwhile, and the person must fix it.
function renderHistoryHealth(hist) {
  const box = $('history-health');
  if (hist.writable !== false) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.replaceChildren(h('strong', {}, 'The history cannot be written'),
    h('span', {}, ` since ${fmtTime(hist.since)} (${hist.failures} failed writes): ${hist.cause}. ` +
      "Agents' actions are refused until it can; nothing reaches the phones, reads go on. " +
      `To fix: ${hist.fix}.`));
  box.hidden = false;
}

async function reload(what) {
  switch (what) {
    case 'health':
      return loadHealth();
    case 'phones':
      return loadPhones();
    case 'approvals':
      return loadApprovals();
    case 'tasks':
      if (state.page === 'history' && !state.taskID) return loadTasks();
      return;
    case 'task':
      if (state.taskID) return loadTask(state.taskID);
      return;
    case 'settings':
      if (state.page === 'settings') return loadSettings();
      return;
  }
}

function handleEvent(ev) {
  switch (ev.kind) {
    case 'approval.opened':
      schedule('approvals');
      break;
    case 'approval.decided':
      if (ev.data && ev.data.id) removeApproval(ev.data.id);
      schedule('approvals');
      break;
    case 'person.takeover':
      if (ev.device) state.held.add(ev.device);
      refreshPhone(ev.device);
      schedule('phones');
      break;
    case 'person.handback':
      if (ev.device) state.held.delete(ev.device);
      refreshPhone(ev.device);
      schedule('phones');
      break;
    case 'step':
      schedule('health');
      schedule('phones');
      if (state.taskID && ev.task === state.taskID) schedule('task');
      schedule('tasks');
      break;
    default:
      if (ev.kind.startsWith('lease.') || ev.kind.startsWith('device.')) {
        schedule('phones');
        schedule('tasks');
      }
      // A phone that comes or goes may change what a driver reports.
      if (ev.kind.startsWith('device.')) schedule('health');
  }
}

function setLive(ok) {
  const c = $('conn');
  c.classList.toggle('live', ok);
  c.classList.toggle('down', !ok);
  c.title = ok ? 'Live updates on' : 'Live updates interrupted; retrying';
}

async function reloadAll() {
  const parts = ['health', 'phones', 'approvals', 'tasks', 'task', 'settings'];
  const res = await Promise.allSettled(parts.map((p) => reload(p)));
  res.forEach((r, i) => r.status === 'rejected' && log('load', parts[i], r.reason));
}

async function eventsLoop() {
  let after = 0;
  // Learn the newest event first, then load the state: what happens in
  // between arrives as events, so nothing is missed.
  for (;;) {
    try {
      const p = await call('events.since', { after: 0, wait_ms: 0, max: 1 });
      after = p.last || 0;
      setLive(true);
      break;
    } catch (e) {
      if (loggedOut) return;
      setLive(false);
      await sleep(2000);
    }
  }
  await reloadAll();
  while (!loggedOut) {
    try {
      const p = await call('events.since', { after, wait_ms: 25000 });
      setLive(true);
      if (p.gap) await reloadAll();
      if (typeof p.next === 'number' && p.next > 0) after = p.next;
      for (const ev of p.events || []) if (ev.kind !== 'gap') handleEvent(ev);
      if (p.closed) {
        showNotice('The Pinky daemon is stopping.');
        setLive(false);
        return;
      }
    } catch (e) {
      if (loggedOut) return;
      log('events:', e);
      setLive(false);
      await sleep(2000);
    }
  }
}

// ---- pages ----

function route() {
  const hash = decodeURIComponent(location.hash.replace(/^#/, ''));
  const [page, ...rest] = hash.split('/');
  const name = ['phones', 'history', 'settings'].includes(page) ? page : 'phones';
  state.page = name;
  for (const p of ['phones', 'history', 'settings']) {
    $('page-' + p).hidden = p !== name;
    $('nav-' + p).classList.toggle('active', p === name);
  }
  if (name === 'history') {
    const task = rest.join('/');
    state.taskID = task;
    $('task-list-view').hidden = !!task;
    $('task-detail').hidden = !task;
    if (task) loadTask(task).catch((e) => showNotice(e.message));
    else loadTasks().catch((e) => log('tasks', e));
  } else {
    state.taskID = '';
  }
  if (name === 'settings') loadSettings().catch((e) => log('settings', e));
}

function init() {
  $('stop-all').addEventListener('click', stopAll);
  $('settings-form').addEventListener('submit', saveSettings);
  $('unlock-form').addEventListener('submit', unlock);
  window.addEventListener('hashchange', route);
  setInterval(tickCountdowns, 1000);
  setInterval(() => reload('health').catch((e) => log('health', e)), 5000);
  route();
  eventsLoop();
}

init();
