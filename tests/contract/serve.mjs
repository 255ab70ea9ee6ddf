// Starts the real gpucost binary (embedded catalog) on a free loopback port for the browser
// tests, reading the port from its `listening` log line; the Node twin of serve.py.
import { spawn } from "node:child_process";

export function startServer(binary) {
    return new Promise((resolve, reject) => {
        const env = { ...process.env };
        delete env.DATABASE_URL;
        const proc = spawn(binary, ["--port", "0", "--access-log", "false"],
                           { env, stdio: ["ignore", "ignore", "pipe"] });
        let buffered = "";
        const timer = setTimeout(() => reject(new Error("no 'listening' line in 20 s")), 20000);
        proc.stderr.on("data", (chunk) => {
            buffered += chunk.toString();
            for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
                const line = buffered.slice(0, nl);
                buffered = buffered.slice(nl + 1);
                try {
                    const entry = JSON.parse(line);
                    if (entry.msg === "listening") {
                        clearTimeout(timer);
                        resolve({ proc, port: entry.port });
                    }
                } catch {
                    // not a log line
                }
            }
        });
        proc.on("exit", (code) => reject(new Error(`gpucost exited with ${code}`)));
    });
}
