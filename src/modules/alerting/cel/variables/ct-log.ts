/** CT-Log event: declared once in src/modules/ct-log/events.ts. */
export { ctLogOptInEvents, ctLogVariables } from "../../../ct-log/events";
