// Package mcptool connects to the MCP servers a config names and offers their tools to agents.
//
// A [Manager] owns every server of a session. [Manager.Tools] starts each distinct server once
// (stdio servers as child processes in their own process group, streamable-HTTP servers as
// client sessions), lists its tools, filters them with the allow and exclude lists, and returns
// them as [tool.Tool] values named mcp__<server>__<tool>. [Manager.Close] stops everything and
// leaves no process behind. [Server] is one mcp_servers entry; [Validate] and [Expand] check it
// and resolve its ${VAR} references.
package mcptool
