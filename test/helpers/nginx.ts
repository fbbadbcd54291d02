/**
 * Debian's nginx as the round-robin load balancer of the cluster tests: the binary runs directly
 * (`-g 'daemon off;'`, prefix and every temp path in a fresh temporary directory, error log there
 * too) with a generated configuration that proxies a free 127.0.0.1 port to the given upstreams
 * with the settings of docs/scaling-out.md (read from it). Never imports vitest.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
export { freePort } from './ports.js'
import { freePort } from './ports.js'

export const NGINX_CANDIDATES = ['/usr/sbin/nginx', '/usr/bin/nginx']

/** The nginx binary (Debian package `nginx`), or undefined when it is not installed. */
export function findNginx(): string | undefined {
  return NGINX_CANDIDATES.find((path) => existsSync(path))
}

/**
 * The `location /` settings of the nginx example in the manual's "Scaling out" page (docs/scaling-out.md), read from
 * the page itself: the tests run exactly the documented configuration, so it stays a tested one.
 */
export function readmeProxyLocation(readme = join(import.meta.dirname, '..', '..', 'docs', 'scaling-out.md')): string {
  const text = readFileSync(readme, 'utf8')
  const block = /```nginx\n([\s\S]*?)```/.exec(text.slice(text.indexOf('## Scaling out')))?.[1]
  const location = block && /location \/ \{\n([\s\S]*?)\n\s*\}\n\}/.exec(block)?.[1]
  if (!location || !location.includes('proxy_pass http://parley;')) {
    throw new Error('docs/scaling-out.md has no ```nginx block with a `location / { proxy_pass http://parley; … }` for the cluster tests')
  }
  return location
}

export function nginxConfig(options: { dir: string; port: number; upstreams: string[]; asRoot: boolean }): string {
  const { dir } = options
  return `
${options.asRoot ? 'user root;' : ''}
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'tmp', 'body')};
  proxy_temp_path ${join(dir, 'tmp', 'proxy')};
  fastcgi_temp_path ${join(dir, 'tmp', 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'tmp', 'uwsgi')};
  scgi_temp_path ${join(dir, 'tmp', 'scgi')};
  upstream parley {
${options.upstreams.map((u) => `    server ${u};`).join('\n')}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${options.port};
    location / {
${readmeProxyLocation()}
    }
  }
}
`
}

export interface Nginx {
  url: string
  port: number
  dir: string
  process: ChildProcess
  /** The error log so far (diagnostics on failure). */
  log(): string
  stop(): Promise<void>
}

/** Starts nginx in front of `upstreams` (`host:port` each); resolves once it accepts requests. */
export async function startNginx(upstreams: string[], options: { binary?: string; port?: number; timeoutMs?: number } = {}): Promise<Nginx> {
  const binary = options.binary ?? findNginx()
  if (!binary) throw new Error('nginx not found (/usr/sbin/nginx): apt-get install nginx')
  const dir = mkdtempSync(join(tmpdir(), 'parley-nginx-'))
  mkdirSync(join(dir, 'tmp'))
  const port = options.port ?? (await freePort())
  const asRoot = process.getuid?.() === 0
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, nginxConfig({ dir, port, upstreams, asRoot }))
  // -e: the error log before the configuration is read (else /var/log/nginx/error.log).
  const child = spawn(binary, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const log = () => {
    let text = output
    try {
      text += readFileSync(join(dir, 'error.log'), 'utf8')
    } catch {}
    return text
  }
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM') // nginx: fast shutdown
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(timer)
    }
    rmSync(dir, { recursive: true, force: true })
  }
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + (options.timeoutMs ?? 15_000)
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const text = log()
      await stop()
      throw new Error(`nginx exited before it was ready:\n${text}`)
    }
    // A TCP connect, not a request: a request before the upstreams listen would mark them failed.
    const ok = await canConnect(port)
    if (ok) return { url, port, dir, process: child, log, stop }
    if (Date.now() > deadline) {
      const text = log()
      await stop()
      throw new Error(`nginx did not accept connections on ${url} within ${options.timeoutMs ?? 15_000} ms:\n${text}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
