import { Type } from 'typebox'
import { StringMap } from '../../schemas/common.js'

/**
 * Shared by the interface and plugin routes (interfaces/, plugins/): their bodies and answers. Bodies are checked
 * here for name and version, the rest by PackageService (checkDefinition: schemas, icon/readme sizes, visibility).
 */
export const PackageBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  version: Type.String({ minLength: 1, maxLength: 200 }),
}, { additionalProperties: true })

export const PackagePatch = StringMap(Type.Unknown())

/** packageView: @botpress/client's Interface or Plugin. */
export const PackageSchema = Type.Object({
  id: Type.String(), createdAt: Type.String(), updatedAt: Type.String(), name: Type.String(), version: Type.String(),
  title: Type.String(), description: Type.String(), public: Type.Boolean(),
}, { additionalProperties: true })

export const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) })
export const NameVersionParams = Type.Object({
  name: Type.String({ maxLength: 200 }),
  version: Type.String({ maxLength: 200, description: 'Exact, `latest`, or a range such as `<1.2.3` (the highest matching)' }),
})
