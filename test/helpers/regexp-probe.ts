/**
 * Records the sources of every RegExp the process builds with the `RegExp` constructor while installed (the
 * global is replaced by a recording Proxy; literals are not constructor calls and are not seen). A test proves
 * a user pattern never reaches JavaScript's backtracking engine by finding no construction of it.
 */
export function probeRegExp(): { sources: string[]; restore(): void } {
  const original = globalThis.RegExp
  const sources: string[] = []
  const record = (args: unknown[]) => { sources.push(args[0] instanceof original ? args[0].source : String(args[0])) }
  globalThis.RegExp = new Proxy(original, {
    construct(target, args, newTarget) { record(args); return Reflect.construct(target, args, newTarget === globalThis.RegExp ? target : newTarget) as object },
    apply(target, thisArg, args) { record(args); return Reflect.apply(target, thisArg, args) as unknown },
  })
  return { sources, restore: () => { globalThis.RegExp = original } }
}
