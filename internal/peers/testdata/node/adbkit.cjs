// adbkit.cjs PORT SERIAL DIR: runs @devicefarmer/adbkit against the adb server on
// PORT and the phone SERIAL, and prints one JSON object of what each call gave;
// the screenshot goes to the folder DIR. It ends by starting
// Messages and running the shell command $TAP (an input tap). The Go test
// checks the values against the virtual phone.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { Readable } = require("node:stream");
const Adb = require("@devicefarmer/adbkit").default;

const [port, serial, dir] = process.argv.slice(2);

async function readAll(stream) {
  return (await Adb.util.readAll(stream));
}

async function main() {
  const client = Adb.createClient({ port: Number(port) });
  const out = {};
  out.devices = (await client.listDevices()).map((d) => ({ id: d.id, type: d.type }));
  const device = client.getDevice(serial);
  const props = await device.getProperties();
  out.props = {
    model: props["ro.product.model"],
    device: props["ro.product.device"],
    sdk: props["ro.build.version.sdk"],
  };
  out.features = Object.keys(await device.getFeatures()).length;
  out.packages = await device.getPackages();
  out.installed = await device.isInstalled("com.google.android.apps.messaging");
  out.dump = (await readAll(await device.shell("uiautomator dump /dev/tty"))).toString();
  out.dumpFile = (await readAll(await device.shell("uiautomator dump /sdcard/window_dump.xml"))).toString();
  out.pulledDump = (await readAll(await device.pull("/sdcard/window_dump.xml"))).toString();
  const png = await readAll(await device.screencap());
  fs.writeFileSync(path.join(dir, "screencap.png"), png);
  // No framebuffer: adbkit reads only the version 1 header, which phones
  // stopped sending with Android 9; @yume-chan/adb's test reads it.
  const transfer = await device.push(Readable.from([Buffer.from("hello from adbkit\n")]), "/sdcard/Download/adbkit.txt");
  await new Promise((resolve, reject) => { transfer.on("end", resolve); transfer.on("error", reject); });
  out.cat = (await readAll(await device.shell("cat /sdcard/Download/adbkit.txt"))).toString();
  out.stat = (await device.stat("/sdcard/Download/adbkit.txt")).size;
  out.readdir = (await device.readdir("/sdcard/Download")).map((e) => e.name).sort();
  out.pulled = (await readAll(await device.pull("/sdcard/Download/adbkit.txt"))).toString();
  await readAll(await device.shell("input keyevent KEYCODE_HOME"));
  out.afterHome = (await readAll(await device.shell("dumpsys window | grep mCurrentFocus"))).toString();
  await device.startActivity({ component: "com.google.android.apps.messaging/.MainActivity", wait: true });
  out.afterStart = (await readAll(await device.shell("dumpsys window | grep mCurrentFocus"))).toString();
  out.tap = (await readAll(await device.shell(process.env.TAP))).toString();
  out.afterTap = (await readAll(await device.shell("uiautomator dump /dev/tty"))).toString();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
