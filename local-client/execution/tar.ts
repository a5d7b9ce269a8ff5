/**
 * A tar archive holding one file (pure): how a file goes into a container through Docker's
 * archive API (`PUT /containers/{id}/archive`), which takes a tar and unpacks it.
 *
 * @example
 * singleFileTar("request.json", Buffer.from("{}")) // → a ustar archive, 512-byte blocks
 */
export function singleFileTar(name: string, data: Buffer, mode = 0o600): Buffer {
  if (Buffer.byteLength(name) > 100 || name.includes("/")) {
    throw new Error(`tar member name ${name} must be a plain name of at most 100 bytes`);
  }
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, "utf8");
  octal(header, 100, 8, mode);
  octal(header, 108, 8, 0); // uid: root
  octal(header, 116, 8, 0); // gid
  octal(header, 124, 12, data.length);
  octal(header, 136, 12, Math.floor(Date.now() / 1000));
  header.fill(" ", 148, 156); // the checksum counts its own field as spaces
  header.write("0", 156, 1, "ascii"); // a regular file
  header.write("ustar\u000000", 257, 8, "ascii");
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, 8, "ascii");
  const padding = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([header, data, padding, Buffer.alloc(1024)]);
}

function octal(header: Buffer, at: number, width: number, value: number): void {
  header.write(`${value.toString(8).padStart(width - 1, "0")}\u0000`, at, width, "ascii");
}
