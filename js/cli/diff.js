// @ts-check
// A line diff of two texts for people reading a failed test: `- ` expected, `+ ` actual, `  ` both,
// with long unchanged runs cut to a few lines of context.

/** Lines kept around a change; longer unchanged runs between changes are cut. */
const CONTEXT = 3;
/** Beyond this many line pairs the LCS table is too big: the texts are shown whole instead. */
const MAX_CELLS = 4_000_000;

/**
 * The diff of `expected` and `actual` as lines, each prefixed.
 * @param {string} expected
 * @param {string} actual
 * @returns {string[]}
 */
export function lineDiff(expected, actual) {
  const a = expected.split('\n');
  const b = actual.split('\n');
  /** @type {[' ' | '-' | '+', string][]} */
  let ops = [];
  if ((a.length + 1) * (b.length + 1) > MAX_CELLS) {
    ops = [
      ...a.map((l) => /** @type {['-', string]} */ (['-', l])),
      ...b.map((l) => /** @type {['+', string]} */ (['+', l])),
    ];
  } else {
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) {
        ops.push([' ', a[i++]]);
        j++;
      } else if (j < b.length && (i === a.length || lcs[i][j + 1] > lcs[i + 1][j])) ops.push(['+', b[j++]]);
      else ops.push(['-', a[i++]]);
    }
  }
  const out = [];
  for (let k = 0; k < ops.length; k++) {
    const [op, line] = ops[k];
    if (op === ' ') {
      const near = (dir) => {
        for (let d = 1; d <= CONTEXT; d++) if (ops[k + dir * d] && ops[k + dir * d][0] !== ' ') return true;
        return false;
      };
      if (!near(-1) && !near(1)) {
        let skipped = 0;
        while (k < ops.length && ops[k][0] === ' ' && !near(1)) {
          skipped++;
          k++;
        }
        k--;
        out.push(`  … ${skipped} unchanged line${skipped === 1 ? '' : 's'}`);
        continue;
      }
    }
    out.push(`${op} ${visible(line)}`);
  }
  return out;
}

/** A line as shown: trailing blanks, tabs and carriage returns made visible, since they are what differs. */
function visible(line) {
  return line.replace(/[ \t\r]+$/, (tail) => tail.replace(/ /g, '·').replace(/\t/g, '→').replace(/\r/g, '␍'));
}
