// Starts the real gpucost binary on a free loopback port for the browser tests, reading the port
// from its `listening` log line; the Node twin of serve.py. Embedded catalog unless `database`:
// then on the DATABASE_URL the caller runs under (tests/pg/with_pg.sh), given longer to start.
import { spawn, spawnSync } from "node:child_process";

export function startServer(binary, { database = false } = {}) {
    return new Promise((resolve, reject) => {
        const env = { ...process.env };
        if (!database) delete env.DATABASE_URL;
        const proc = spawn(binary, ["--port", "0", "--access-log", "false"],
                           { env, stdio: ["ignore", "ignore", "pipe"] });
        let buffered = "";
        const waitS = database ? 30 : 20;
        const timer = setTimeout(() => reject(new Error(`no 'listening' line in ${waitS} s`)), waitS * 1000);
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

// A gpucost command (migrate, seed, apikey create ...) run to its end: its standard output.
export function gpucostCommand(binary, ...args) {
    const r = spawnSync(binary, args, { encoding: "utf8", timeout: 60000 });
    if (r.status !== 0) throw new Error(`gpucost ${args.join(" ")} failed: ${r.stderr}`);
    return r.stdout.trim();
}
