/**
 * A minimal PDF writer for tests: one Helvetica text line per entry, one page per array. Just enough
 * structure (catalog, pages, content streams, xref) for pdf.js to read the text back.
 */
export function makePdf(pages: string[][], title?: string): Buffer {
  const escape = (s: string) => s.replace(/[\\()]/g, (m) => `\\${m}`)
  const objects: string[] = ['<< /Type /Catalog /Pages 2 0 R >>']
  objects.push(`<< /Type /Pages /Kids [${pages.map((_, i) => `${3 + i * 2} 0 R`).join(' ')}] /Count ${pages.length} >>`)
  const font = 3 + pages.length * 2
  pages.forEach((lines, i) => {
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${4 + i * 2} 0 R >>`)
    const stream = `BT /F1 11 Tf 14 TL 50 740 Td ${lines.map((l) => `(${escape(l)}) Tj T*`).join(' ')} ET`
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`)
  })
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>')
  if (title) objects.push(`<< /Title (${escape(title)}) >>`)
  let out = '%PDF-1.4\n'
  const offsets: number[] = []
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'))
    out += `${i + 1} 0 obj\n${o}\nendobj\n`
  })
  const xref = Buffer.byteLength(out, 'latin1')
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${title ? ` /Info ${objects.length} 0 R` : ''} >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}
