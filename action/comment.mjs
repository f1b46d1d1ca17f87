/**
 * One PR comment per pull request, updated in place (the action's comment step, through actions/github-script): found
 * by its marker, else created. The step is skipped on forks (a read-only token) and may fail without failing the job.
 */
import { readFileSync } from 'node:fs';

export const MARKER = '<!-- rankgate:search-eval -->';

export async function upsertComment({ github, context, file, marker = MARKER }) {
  let body = readFileSync(file, 'utf8');
  if (!body.includes(marker)) body = `${marker}\n${body}`;
  const { owner, repo } = context.repo;
  const issue_number = context.issue.number;
  const comments = await github.paginate(github.rest.issues.listComments, { owner, repo, issue_number });
  const mine = comments.find((c) => typeof c.body === 'string' && c.body.includes(marker));
  if (mine) {
    await github.rest.issues.updateComment({ owner, repo, comment_id: mine.id, body });
    return { updated: mine.id };
  }
  const r = await github.rest.issues.createComment({ owner, repo, issue_number, body });
  return { created: r?.data?.id ?? null };
}
