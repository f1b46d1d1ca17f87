/**
 * Reviewer names, compared as one person would read them: Unicode NFKC, case folded, invisible characters removed
 * (format characters such as the zero-width space and joiners, controls, variation selectors and other default
 * ignorables), whitespace collapsed. `bob`, `BOB`, `ｂｏｂ` and `bob` + a zero-width space are one reviewer; `Bob (2)`
 * is another name (a counter is not removed: the export's `--reviewers` list is what refuses an unexpected name).
 * The review page (src/report/html/review.ts) keys a reviewer's stored ratings by the same normalisation.
 */

const INVISIBLE = /[\p{Cf}\p{Cc}\p{Default_Ignorable_Code_Point}]/gu;

/** The form names are compared in (empty when nothing visible is left). */
export function normaliseReviewer(name: string): string {
  return name
    .normalize('NFKC')
    .replace(INVISIBLE, '')
    .toUpperCase()
    .toLowerCase()
    .normalize('NFKC')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A name as given, with its invisible characters shown as \u escapes (for one-line messages). */
export function shownName(name: string): string {
  return JSON.stringify(name.replace(INVISIBLE, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`)).replace(/\\\\u/g, '\\u');
}
