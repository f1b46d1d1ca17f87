/** A GitHub Actions workflow validated the way GitHub does (@actions/workflow-parser): its errors, none when valid. */
import { NoOperationTraceWriter, convertWorkflowTemplate, parseWorkflow } from '@actions/workflow-parser';

export async function workflowErrors(text: string, name = 'workflow.yml'): Promise<string[]> {
  const r = parseWorkflow({ name, content: text }, new NoOperationTraceWriter());
  if (r.value) await convertWorkflowTemplate(r.context, r.value);
  return r.context.errors.getErrors().map((e) => e.message);
}
