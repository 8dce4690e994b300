// yumechan.mjs PORT SERIAL DIR [SCRCPY_JAR SCRCPY_VERSION]: runs @yume-chan/adb
// through the adb server on PORT against the phone SERIAL and prints one JSON
// object of what each call gave; the screenshot goes to the folder DIR. With a
// jar it instead pushes the jar as scrcpy's server with @yume-chan/adb-scrcpy,
// starts a session of that version, reads the video's configuration and a
// frame and touches the point $TOUCH ("X,Y" in the video's pixels), then
// waits for the app $WAIT_APP to come to the front. The Go test checks the
// values against the virtual phone.
import { Adb, AdbServerClient } from "@yume-chan/adb";
import { AdbServerNodeTcpConnector } from "@yume-chan/adb-server-node-tcp";
import { AdbScrcpyClient, AdbScrcpyOptions3_3_3 } from "@yume-chan/adb-scrcpy";
import { AndroidMotionEventAction, DefaultServerPath, ScrcpyPointerId } from "@yume-chan/scrcpy";
import { ReadableStream } from "@yume-chan/stream-extra";
import fs from "node:fs";
import path from "node:path";

const [port, serial, dir, jar, version] = process.argv.slice(2);

function bytesOf(text) {
  return new ReadableStream({
    start(c) { c.enqueue(new TextEncoder().encode(text)); c.close(); },
  });
}

async function readAll(stream) {
  const chunks = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

async function withTimeout(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(what + ": no answer in " + ms + " ms")), ms); });
  try { return await Promise.race([p, t]); } finally { clearTimeout(timer); }
}

async function scrcpy(adb, out) {
  await AdbScrcpyClient.pushServer(adb, new ReadableStream({
    start(c) { c.enqueue(new Uint8Array(fs.readFileSync(jar))); c.close(); },
  }), DefaultServerPath);
  // $TUNNEL=reverse: the library's own default path (adb reverse, the
  // server dials back through the adb server); else a forward tunnel.
  const tunnelForward = process.env.TUNNEL !== "reverse";
  const options = new AdbScrcpyOptions3_3_3({ audio: false, control: true, maxSize: 800, tunnelForward }, { version });
  const client = await AdbScrcpyClient.start(adb, DefaultServerPath, options);
  try {
    const video = await withTimeout(client.videoStream, 30000, "video stream");
    out.scrcpy = { codec: video.metadata.codec, width: video.metadata.width, height: video.metadata.height };
    const reader = video.stream.getReader();
    let config = false, frame = false;
    while (!frame) {
      const { done, value } = await withTimeout(reader.read(), 30000, "video packet");
      if (done) break;
      if (value.type === "configuration") config = true;
      if (value.type === "data") frame = value.data.length > 0;
    }
    out.scrcpy.config = config;
    out.scrcpy.frame = frame;
    reader.releaseLock();
    const [x, y] = process.env.TOUCH.split(",").map(Number);
    const touch = (action) => client.controller.injectTouch({
      action, pointerId: ScrcpyPointerId.Finger, pointerX: x, pointerY: y,
      videoWidth: video.metadata.width, videoHeight: video.metadata.height,
      pressure: action === AndroidMotionEventAction.Up ? 0 : 1, actionButton: 0, buttons: 0,
    });
    // The video is scaled to maxSize: the point is in the video's pixels.
    await touch(AndroidMotionEventAction.Down);
    await touch(AndroidMotionEventAction.Up);
    out.scrcpy.touched = true;
    // Keep the session until the phone took the touch ($WAIT_APP in
    // front), for at most 30 s: closing it stops the server, and what it
    // has not read yet with it.
    for (let i = 0; i < 300; i++) {
      const focus = await adb.subprocess.noneProtocol.spawnWaitText("dumpsys window | grep mCurrentFocus");
      if (focus.includes(process.env.WAIT_APP + "/")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await client.close();
  }
}

async function basics(adb, out) {
  out.features = adb.deviceFeatures;
  out.model = await adb.getProp("ro.product.model");
  out.device = await adb.getProp("ro.product.device");
  const shell = adb.subprocess.shellProtocol;
  if (shell) {
    const r = await shell.spawnWaitText("echo out; echo err >&2; exit 3");
    out.shell = { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
  }
  out.dump = await adb.subprocess.noneProtocol.spawnWaitText("uiautomator dump /dev/tty");
  const png = await adb.subprocess.noneProtocol.spawnWait("screencap -p");
  fs.writeFileSync(path.join(dir, "screencap.png"), png);
  try {
    const fb = await adb.framebuffer();
    out.framebuffer = { width: fb.width, height: fb.height, bpp: fb.bpp, size: fb.data.length };
  } catch (err) {
    out.framebuffer = { error: String(err) };
  }
  const sync = await adb.sync();
  try {
    await sync.write({ filename: "/sdcard/Download/yume.txt", file: bytesOf("hello from yume-chan\n") });
    out.pulled = (await readAll(sync.read("/sdcard/Download/yume.txt"))).toString();
    out.stat = Number((await sync.stat("/sdcard/Download/yume.txt")).size);
    out.readdir = (await sync.readdir("/sdcard/Download")).map((e) => e.name).sort();
  } finally {
    await sync.dispose();
  }
  await adb.subprocess.noneProtocol.spawnWaitText("input keyevent 3");
  out.afterHome = await adb.subprocess.noneProtocol.spawnWaitText("dumpsys window | grep mCurrentFocus");
}

async function main() {
  const client = new AdbServerClient(new AdbServerNodeTcpConnector({ host: "127.0.0.1", port: Number(port) }));
  const out = {};
  out.devices = (await client.getDevices()).map((d) => ({ serial: d.serial, state: d.state, model: d.model, product: d.product, device: d.device }));
  const adb = new Adb(await client.createTransport({ serial }));
  try {
    if (jar) await scrcpy(adb, out);
    else await basics(adb, out);
  } finally {
    await adb.close();
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().then(() => process.exit(0), (err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
