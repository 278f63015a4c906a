/** A module's message templates: subject and body with {{field.path}} placeholders. */
import { del, get, post, put } from "../../api";
import { type ModuleName, useSession } from "../../session";
import { Form, TextArea, TextField, useForm } from "../../ui/form";
import { Time } from "../../ui/time";
import { ItemsTab } from "./items-tab";
import type { Template } from "./types";

export function TemplatesTab({ module }: { module: ModuleName }) {
  const s = useSession();
  return (
    <ItemsTab<Template>
      title="Message templates"
      caption="Alert templates"
      noun="template"
      load={() => get(`/api/${module}/alert-templates`).then((r) => r.templates)}
      deps={[module]}
      can={{ create: s.can(`${module}:create_alert_templates`), update: s.can(`${module}:update_alert_templates`), delete: s.can(`${module}:delete_alert_templates`) }}
      remove={(x) => del(`/api/${module}/alert-templates/{template_id}`, { params: { path: { template_id: x.id } } })}
      empty={<p>No template: alerts use the default message. A template writes the subject and body with {"{{field.path}}"} placeholders.</p>}
      columns={() => [
        { label: "Name", sort: "name", render: (x) => <strong>{x.name}</strong> },
        { label: "Subject", sort: "subject", render: (x) => <code class="expr">{x.subject}</code> },
        { label: "Updated", sort: "updated_at", render: (x) => <Time iso={x.updated_at} /> },
      ]}
      editorIn="dialog"
      editor={(template, done) => <TemplateForm module={module} template={template} onDone={done} onCancel={() => done()} />}
    />
  );
}

function TemplateForm({ module, template, onDone, onCancel }: { module: ModuleName; template: Template | null; onDone: (m: string) => void; onCancel: () => void }) {
  const form = useForm({ name: template?.name ?? "", subject: template?.subject ?? "", body: template?.body ?? "" });
  return (
    <Form
      form={form}
      label="Template"
      submitLabel="Save template"
      onCancel={onCancel}
      onSubmit={async () => {
        let m = "";
        if (await form.submit(async (v) => (m = (template ? await put(`/api/${module}/alert-templates/{template_id}`, { params: { path: { template_id: template.id } }, body: v }) : await post(`/api/${module}/alert-templates`, { body: v })).message))) onDone(m);
      }}
    >
      <TextField form={form} name="name" label="Name" required />
      <TextField form={form} name="subject" label="Subject" hint="Placeholders like {{cert.subject}} are replaced by the event's values." required />
      <TextArea form={form} name="body" label="Body" rows={8} mono required />
    </Form>
  );
}
