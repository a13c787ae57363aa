// W1 on ONNX Runtime (npm onnxruntime-node, its bundled CPU library), one model, one thread count.
// usage: ORT_DIR=<folder with node_modules/onnxruntime-node> node bench_ort.mjs MODEL.onnx THREADS [REPS=15]
// Input and reference: w1-input.bin / w1-ref.bin next to the model (make_workloads.py).
// Prints one JSON line: median ms per forward after 3 warm-ups, and the relative L2 error of the
// output against torch fp32.
import fs from "node:fs";
import path from "node:path";
import {createRequire} from "node:module";

const ortDir = process.env.ORT_DIR;
if (!ortDir) throw new Error("set ORT_DIR (the folder onnxruntime-node was installed into)");
const ort = createRequire(path.join(ortDir, "package.json"))("onnxruntime-node");

const [modelPath, threadsArg, repsArg = "15"] = process.argv.slice(2);
const threads = Number(threadsArg);
const dir = path.dirname(modelPath);
const readF32 = (f) => {
    const b = fs.readFileSync(path.join(dir, f));
    return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const x = readF32("w1-input.bin"), ref = readF32("w1-ref.bin");
const median = (a) => {
    const s = [...a].sort((p, q) => p - q), n = s.length;
    return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ["cpu"], intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: "sequential", graphOptimizationLevel: "all"});
const feeds = {x: new ort.Tensor("float32", x, [1, 128, 768])};
let y;
const times = [];
for (let r = 0; r < 3 + Number(repsArg); r++) {
    const t = performance.now();
    y = (await session.run(feeds)).y.data;
    if (r >= 3) times.push(performance.now() - t);
}
let num = 0, den = 0;
for (let i = 0; i < y.length; i++) { num += (y[i] - ref[i]) ** 2; den += ref[i] ** 2; }
console.log(JSON.stringify({
    engine: "ort-int8", peer: `onnxruntime-node ${ort.env.versions.node}`, form: path.basename(modelPath),
    workload: "w1", threads, ms_per_forward: +median(times).toFixed(2), runs_ms: times.map((t) => +t.toFixed(2)),
    rel_err_vs_torch_fp32: +Math.sqrt(num / den).toFixed(5)}));
await session.release();
