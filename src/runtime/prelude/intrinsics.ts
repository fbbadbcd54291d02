/*
 * Built-ins the prelude uses, captured when it is evaluated: before any bot code runs in the VM. Bot code shares this
 * realm and could replace the globals afterwards (JSON.stringify, Promise.race, Object.keys...); the prelude calls
 * these bindings, which nothing outside the bundle's closure can reach. index.ts imports this module first, so it
 * is the first thing the bundle evaluates.
 */
import type { UserFn } from './types.js'

export const now: () => number = Date.now
export const random: () => number = Math.random
export const floor = Math.floor
export const mathMin = Math.min
export const mathMax = Math.max
export const jsonStringify = JSON.stringify
export const HostPromise = Promise
export const promiseRace = Promise.race.bind(Promise)
export const jsonParse = JSON.parse
export const objectKeys = Object.keys
export const freeze = Object.freeze
export const objectAssign = Object.assign
export const ProxyCtor = Proxy
export const asyncIterator: typeof Symbol.asyncIterator = Symbol.asyncIterator
export const defineProperty = Object.defineProperty
export const isArray = Array.isArray
export const ownProperty = Object.prototype.hasOwnProperty
export const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor as new (...args: string[]) => UserFn
export const FunctionCtor = Function as unknown as new (...args: string[]) => UserFn
