// The only network a code tool has (docs/guides/code-tools.md): its Dynamic Worker's global outbound, given
// only to a tool that declares allowed_hosts. A request passes when its URL is under TOOL_URL_ALLOWLIST (checked
// now: the list may have changed since the tool was saved) and its host is one the tool declared; it is sent
// without following redirects (a redirect could leave both lists). Anything else is refused with an error the
// script sees as a rejected fetch.
import { WorkerEntrypoint } from "cloudflare:workers";
import { parseAllowlist, urlAllowed } from "../engine/url-allowlist";
import type { Env } from "../env";

export interface OutboundProps {
  tool: string;
  hosts: string[];
}

export class CodeToolOutbound extends WorkerEntrypoint<Env, OutboundProps> {
  override async fetch(request: Request): Promise<Response> {
    const { tool, hosts } = this.ctx.props;
    const url = new URL(request.url);
    if (!hosts.includes(url.host)) {
      throw new Error(`code tool "${tool}" may not reach ${url.host}: it is not in the tool's allowed_hosts`);
    }
    if (!urlAllowed(request.url, parseAllowlist(this.env.TOOL_URL_ALLOWLIST))) {
      throw new Error(`code tool "${tool}" may not reach ${url.origin}${url.pathname}: it is not under the deployment's TOOL_URL_ALLOWLIST`);
    }
    return fetch(new Request(request, { redirect: "manual" }));
  }
}
