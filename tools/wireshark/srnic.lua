-- Wireshark/tshark dissector for srnic's wire format (docs/wire-protocol.md;
-- the code that makes and reads it: src/wire/wire.c).  Every field of the
-- document is named here; keep the three in step.
--   tshark -X lua_script:tools/wireshark/srnic.lua -r FILE.pcapng
--   (or copy this file into ~/.local/lib/wireshark/plugins/)
local p = Proto("srnic", "srnic software RDMA NIC")

-- The opcodes, as srnic_op_table in src/wire/wire.c (the source of truth):
-- name, the extension after the base header, and whether pkt_len bytes of
-- payload follow the headers.  tests/unit/test_wire_tables.c reads these
-- lines and fails when they differ from the table.
local OPS = {
	[1] = {name = "SEND", ext = "data", payload = true},
	[2] = {name = "WRITE", ext = "data", payload = true},
	[3] = {name = "READ_REQ", ext = "data", payload = false},
	[4] = {name = "READ_RESP", ext = "data", payload = true},
	[5] = {name = "ACK", ext = "ack", payload = false},
	[6] = {name = "HELLO", ext = "hello", payload = false},
	[7] = {name = "BYE", ext = "hello", payload = false},
	[8] = {name = "BYE_ACK", ext = "hello", payload = false},
	[9] = {name = "BOOTING", ext = "hello", payload = false},
	[10] = {name = "BOOT_ACK", ext = "hello", payload = false},
	[11] = {name = "RDMA_READY", ext = "hello", payload = false},
	[12] = {name = "ATOMIC_REQ", ext = "data", payload = true},
	[13] = {name = "UD_SEND", ext = "data", payload = true},
	[14] = {name = "SVC_ANNOUNCE", ext = "hello", payload = false},
	[15] = {name = "SVC_RESYNC", ext = "ack", payload = false},
	[16] = {name = "SVC_RESYNC_ACK", ext = "ack", payload = false},
	[17] = {name = "TP_READ_REQ", ext = "data", payload = false},
	[18] = {name = "TPT_UPDATE", ext = "hello", payload = false},
	[19] = {name = "TPT_ACK", ext = "hello", payload = false},
	[20] = {name = "READ_DONE", ext = "ack", payload = false},
	[21] = {name = "READ_DONE_ACK", ext = "ack", payload = false},
}
local opcodes = {}
for op, o in pairs(OPS) do opcodes[op] = o.name end
local syndromes = {
	[0] = "ACK", [1] = "RNR NAK", [2] = "access NAK",
	[3] = "invalid request NAK", [4] = "operational NAK",
}

local F = {
	-- base header (24 bytes)
	version = ProtoField.uint8("srnic.version", "Version"),
	opcode = ProtoField.uint8("srnic.opcode", "Opcode", base.DEC, opcodes),
	flags = ProtoField.uint16("srnic.flags", "Flags", base.HEX),
	f_imm = ProtoField.bool("srnic.flags.imm", "IMM", 16, nil, 0x0001),
	f_recv_cqe = ProtoField.bool("srnic.flags.recv_cqe", "RECV_CQE", 16, nil, 0x0002),
	f_solicited = ProtoField.bool("srnic.flags.solicited", "SOLICITED", 16, nil, 0x0004),
	f_last = ProtoField.bool("srnic.flags.last", "LAST", 16, nil, 0x0008),
	f_sack = ProtoField.bool("srnic.flags.sack", "SACK", 16, nil, 0x0010),
	f_nak = ProtoField.bool("srnic.flags.nak", "NAK", 16, nil, 0x0020),
	f_cas = ProtoField.bool("srnic.flags.cas", "CAS", 16, nil, 0x0040),
	f_inv = ProtoField.bool("srnic.flags.inv", "INV", 16, nil, 0x0080),
	f_crc = ProtoField.bool("srnic.flags.crc", "CRC", 16, nil, 0x0100),
	f_auth = ProtoField.bool("srnic.flags.auth", "AUTH", 16, nil, 0x0200),
	f_probe = ProtoField.bool("srnic.flags.probe", "PROBE", 16, nil, 0x0400),
	f_atomic_wr = ProtoField.bool("srnic.flags.atomic_wr", "ATOMIC_WR", 16, nil, 0x0800),
	f_xrc = ProtoField.bool("srnic.flags.xrc", "XRC", 16, nil, 0x1000),
	f_group = ProtoField.bool("srnic.flags.group", "GROUP", 16, nil, 0x2000),
	f_acks = ProtoField.bool("srnic.flags.acks", "ACKS", 16, nil, 0x4000),
	f_third_party = ProtoField.bool("srnic.flags.third_party", "THIRD_PARTY", 16, nil, 0x8000),
	dst_qpn = ProtoField.uint32("srnic.dst_qpn", "Destination QP", base.HEX),
	src_qpn = ProtoField.uint32("srnic.src_qpn", "Source QP", base.HEX),
	src_inc = ProtoField.uint32("srnic.src_inc", "Source incarnation", base.HEX),
	dst_inc = ProtoField.uint32("srnic.dst_inc", "Destination incarnation", base.HEX),
	msn = ProtoField.uint32("srnic.msn", "Message sequence number"),
	-- data extension (44 bytes)
	txid = ProtoField.uint32("srnic.txid", "Transaction id", base.HEX),
	ssn = ProtoField.uint32("srnic.ssn", "Receive sequence number"),
	rkey = ProtoField.uint32("srnic.rkey", "Remote key (UD: Q_Key)", base.HEX),
	imm = ProtoField.uint32("srnic.imm", "Immediate data (READ_REQ, TP_READ_REQ: read length)", base.HEX),
	va = ProtoField.uint64("srnic.va", "Virtual address", base.HEX),
	ud_src = ProtoField.ipv4("srnic.ud.src", "UD source IPv4"),
	ud_dst = ProtoField.ipv4("srnic.ud.dst", "UD destination IPv4 (group id)"),
	msg_off = ProtoField.uint32("srnic.msg_off", "Message offset"),
	pkt_len = ProtoField.uint32("srnic.pkt_len", "Packet payload length"),
	msg_len = ProtoField.uint32("srnic.msg_len", "Message length"),
	stride_shift = ProtoField.uint8("srnic.stride_shift", "Stride shift"),
	xflags = ProtoField.uint8("srnic.xflags", "Further flags (1: the WRITE's or READ's target completes it too; 2: ACK at once)", base.HEX),
	ack_req = ProtoField.bool("srnic.ack_req", "ACK asked for at once", 8, nil, 0x02),
	reserved = ProtoField.bytes("srnic.reserved", "Reserved"),
	ts = ProtoField.uint16("srnic.ts", "Send time (us, 16 bits)"),
	ack_msn = ProtoField.uint32("srnic.ack_msn", "ACK riding with the request (flag ACKS)"),
	compare_add = ProtoField.uint64("srnic.atomic.compare_add", "Compare / add", base.HEX),
	swap = ProtoField.uint64("srnic.atomic.swap", "Swap", base.HEX),
	payload = ProtoField.bytes("srnic.payload", "Payload"),
	-- third-party extension (32 bytes, TP_READ_REQ)
	tp_ip = ProtoField.ipv4("srnic.tp.ip", "Target node IPv4"),
	tp_inc = ProtoField.uint32("srnic.tp.inc", "Target incarnation", base.HEX),
	tp_qpn = ProtoField.uint32("srnic.tp.qpn", "Target QP", base.HEX),
	tp_ctl_qpn = ProtoField.uint32("srnic.tp.ctl_qpn", "Controller QP", base.HEX),
	tp_rkey = ProtoField.uint32("srnic.tp.rkey", "Target key", base.HEX),
	tp_va = ProtoField.uint64("srnic.tp.va", "Target address", base.HEX),
	-- XRC extension (4 bytes, flag XRC)
	xrc_srqn = ProtoField.uint32("srnic.xrc.srqn", "XRC SRQ number"),
	-- ACK extension (32 bytes)
	syndrome = ProtoField.uint8("srnic.ack.syndrome", "Syndrome", base.DEC, syndromes),
	rnr_timer = ProtoField.uint8("srnic.ack.rnr_timer", "RNR timer"),
	ts_echo = ProtoField.uint16("srnic.ack.ts_echo", "Timestamp echo"),
	nak_msn = ProtoField.uint32("srnic.ack.nak_msn", "NAK message"),
	nak_txid = ProtoField.uint32("srnic.ack.nak_txid", "NAK transaction id", base.HEX),
	recv_credit = ProtoField.uint32("srnic.ack.recv_credit", "Receive credit (receives posted below)"),
	sack_msn = ProtoField.uint32("srnic.ack.sack_msn", "SACK message"),
	sack_first = ProtoField.uint32("srnic.ack.sack_first", "SACK first missing packet"),
	credit = ProtoField.uint32("srnic.ack.credit", "Credit"),
	sack_bits = ProtoField.uint64("srnic.ack.sack_bits", "SACK bits", base.HEX),
	-- control extension (56 bytes)
	node_ip = ProtoField.ipv4("srnic.ctl.ip", "Node IPv4 (an IPv6 node's: its id)"),
	node_ip6 = ProtoField.ipv6("srnic.ctl.ipv6", "Node IPv6 (:: for an IPv4 node)"),
	port = ProtoField.uint8("srnic.ctl.port", "Sending port"),
	node_mac = ProtoField.ether("srnic.ctl.mac", "Node MAC"),
	node_name = ProtoField.stringz("srnic.ctl.name", "Node name"),
	groups = ProtoField.uint64("srnic.ctl.groups", "Multicast RDMA groups held", base.HEX),
	ctl_dev = ProtoField.uint8("srnic.ctl.dev", "Adapter of the sending port"),
	ctl_ndev = ProtoField.uint8("srnic.ctl.ndev", "Adapters of the node"),
	hello_ms = ProtoField.uint16("srnic.ctl.hello_ms", "HELLO interval (ms)"),
	hello_queues = ProtoField.uint8("srnic.ctl.queues", "Steering classes (0: 1)"),
	hello_paths = ProtoField.uint8("srnic.ctl.paths", "Peer's paths heard (UDP)", base.HEX),
	path_loss = ProtoField.bytes("srnic.ctl.path_loss", "Peer's paths' loss, 256ths (UDP; ff: not measured)"),
	path_delay = ProtoField.bytes("srnic.ctl.path_delay", "Peer's paths' delay over the best's, 4 bits each (UDP; f: not measured)"),
	svc_ip = ProtoField.ipv4("srnic.svc.ip", "Service address"),
	svc_prio = ProtoField.uint8("srnic.svc.prio", "Member priority"),
	svc_holder = ProtoField.uint8("srnic.svc.holder", "Holds it (term: msn)"),
	svc_mode = ProtoField.uint8("srnic.svc.mode", "Mode (0 group, 1 switch)"),
	svc_bound = ProtoField.uint8("srnic.svc.bound", "Holder's bound QPs"),
	tpt_index = ProtoField.uint8("srnic.tpt.index", "Entry"),
	tpt_count = ProtoField.uint8("srnic.tpt.count", "Entries in the table"),
	tpt_access = ProtoField.uint8("srnic.tpt.access", "Remote rights (2 write, 4 read, 8 atomic)", base.HEX),
	tpt_gen = ProtoField.uint32("srnic.tpt.gen", "Table generation"),
	tpt_name = ProtoField.uint32("srnic.tpt.name", "Name", base.HEX),
	tpt_rkey = ProtoField.uint32("srnic.tpt.rkey", "Key", base.HEX),
	tpt_addr = ProtoField.uint64("srnic.tpt.addr", "Address", base.HEX),
	tpt_length = ProtoField.uint64("srnic.tpt.length", "Length"),
	mac = ProtoField.bytes("srnic.ctl.auth_mac", "HMAC-SHA-512-256"),
	-- trailer
	crc = ProtoField.uint32("srnic.crc", "CRC-32C", base.HEX),
}
local list = {}
for _, f in pairs(F) do list[#list + 1] = f end
p.fields = list

function p.dissector(tvb, pinfo, tree)
	if tvb:len() < 24 then return 0 end
	local op = tvb(1, 1):uint()
	local flags = tvb(2, 2):uint()
	local o = OPS[op] or {name = "opcode " .. op}
	local name = o.name
	pinfo.cols.protocol = "srnic"
	local t = tree:add(p, tvb(), "srnic " .. name)
	t:add(F.version, tvb(0, 1))
	t:add(F.opcode, tvb(1, 1))
	local ft = t:add(F.flags, tvb(2, 2))
	for _, f in ipairs({F.f_imm, F.f_recv_cqe, F.f_solicited, F.f_last,
			    F.f_sack, F.f_nak, F.f_cas, F.f_inv, F.f_crc,
			    F.f_auth, F.f_probe, F.f_atomic_wr, F.f_xrc,
			    F.f_group, F.f_acks, F.f_third_party}) do
		ft:add(f, tvb(2, 2))
	end
	if op == 6 then
		-- (a HELLO has no QPs: its QPNs' bytes are the paths' losses,
		-- its dst_inc's their delays)
		t:add(F.path_loss, tvb(4, 8))
		t:add(F.src_inc, tvb(12, 4))
		t:add(F.path_delay, tvb(16, 4))
	else
		t:add(F.dst_qpn, tvb(4, 4))
		t:add(F.src_qpn, tvb(8, 4))
		t:add(F.src_inc, tvb(12, 4))
		t:add(F.dst_inc, tvb(16, 4))
	end
	t:add(F.msn, tvb(20, 4))
	-- (a multicast RDMA WRITE, and a member's ACK to one)
	if bit.band(flags, 0x2000) ~= 0 then name = "MC_" .. name end
	if bit.band(flags, 0x8000) ~= 0 then name = "TP_" .. name end
	local info = string.format("%s %#x -> %#x msn %d", name,
		tvb(8, 4):uint(), tvb(4, 4):uint(), tvb(20, 4):uint())
	local off = 24
	if o.ext == "data" and tvb:len() >= off + 44 then
		local e = t:add(p, tvb(off, 44), "Data extension")
		e:add(F.txid, tvb(off, 4))
		e:add(F.ssn, tvb(off + 4, 4))
		e:add(F.rkey, tvb(off + 8, 4))
		e:add(F.imm, tvb(off + 12, 4))
		if op == 13 then
			e:add(F.ud_src, tvb(off + 16, 4))
			e:add(F.ud_dst, tvb(off + 20, 4))
		else
			e:add(F.va, tvb(off + 16, 8))
		end
		e:add(F.msg_off, tvb(off + 24, 4))
		e:add(F.pkt_len, tvb(off + 28, 4))
		e:add(F.msg_len, tvb(off + 32, 4))
		e:add(F.stride_shift, tvb(off + 36, 1))
		e:add(F.xflags, tvb(off + 37, 1))
		e:add(F.ack_req, tvb(off + 37, 1))
		e:add(F.ts, tvb(off + 38, 2))
		if bit.band(flags, 0x4000) ~= 0 then
			e:add(F.ack_msn, tvb(off + 40, 4))
		end
		local plen = tvb(off + 28, 4):uint()
		info = info .. string.format(" txid %#x key %#x off %d len %d",
			tvb(off, 4):uint(), tvb(off + 8, 4):uint(),
			tvb(off + 24, 4):uint(), plen)
		off = off + 44
		if bit.band(flags, 0x1000) ~= 0 and tvb:len() >= off + 4 then
			t:add(F.xrc_srqn, tvb(off, 4))
			info = info .. string.format(" srqn %d", tvb(off, 4):uint())
			off = off + 4
		end
		if op == 17 and tvb:len() >= off + 32 then
			local x = t:add(p, tvb(off, 32), "Third-party extension")
			x:add(F.tp_ip, tvb(off, 4))
			x:add(F.tp_inc, tvb(off + 4, 4))
			x:add(F.tp_qpn, tvb(off + 8, 4))
			x:add(F.tp_ctl_qpn, tvb(off + 12, 4))
			x:add(F.tp_rkey, tvb(off + 16, 4))
			x:add(F.reserved, tvb(off + 20, 4))
			x:add(F.tp_va, tvb(off + 24, 8))
			info = info .. string.format(" to %s qp %#x",
				tostring(tvb(off, 4):ipv4()), tvb(off + 8, 4):uint())
			off = off + 32
		end
		if op == 12 and tvb:len() >= off + 16 then
			t:add(F.compare_add, tvb(off, 8))
			t:add(F.swap, tvb(off + 8, 8))
			off = off + 16
		elseif o.payload and plen > 0 and tvb:len() >= off + plen then
			t:add(F.payload, tvb(off, plen))
			off = off + plen
		end
	elseif o.ext == "ack" and tvb:len() >= off + 32 then
		local e = t:add(p, tvb(off, 32), "ACK extension")
		e:add(F.syndrome, tvb(off, 1))
		e:add(F.rnr_timer, tvb(off + 1, 1))
		e:add(F.ts_echo, tvb(off + 2, 2))
		e:add(F.nak_msn, tvb(off + 4, 4))
		-- (an RC ACK that is no NAK, flagged RECV_CQE: its receive
		-- credit in the NAK's attempt's place)
		if bit.band(flags, 0x2) ~= 0 and tvb(off, 1):uint() == 0 then
			e:add(F.recv_credit, tvb(off + 8, 4))
		else
			e:add(F.nak_txid, tvb(off + 8, 4))
		end
		e:add(F.sack_msn, tvb(off + 12, 4))
		e:add(F.sack_first, tvb(off + 16, 4))
		e:add(F.credit, tvb(off + 20, 4))
		e:add(F.sack_bits, tvb(off + 24, 8))
		info = info .. " " .. (syndromes[tvb(off, 1):uint()] or "?")
		off = off + 32
		-- (SVC_RESYNC and its ACK are signed under a cluster key)
		if bit.band(flags, 0x200) ~= 0 and tvb:len() >= off + 32 then
			t:add(F.mac, tvb(off, 32))
			off = off + 32
		end
	elseif o.ext == "hello" and tvb:len() >= off + 56 then
		local e = t:add(p, tvb(off, 56), "Control extension")
		e:add(F.node_ip, tvb(off, 4))
		e:add(F.port, tvb(off + 4, 1))
		if op == 18 or op == 19 then
			-- a published region (TPT_ACK: the generation only)
			e:add(F.tpt_index, tvb(off + 5, 1))
			e:add(F.tpt_count, tvb(off + 6, 1))
			e:add(F.tpt_access, tvb(off + 7, 1))
			e:add(F.tpt_gen, tvb(off + 8, 4))
			e:add(F.tpt_name, tvb(off + 12, 4))
			e:add(F.tpt_rkey, tvb(off + 16, 4))
			e:add(F.reserved, tvb(off + 20, 4))
			e:add(F.tpt_addr, tvb(off + 24, 8))
			e:add(F.tpt_length, tvb(off + 32, 8))
			info = info .. string.format(" gen %u entry %u of %u",
				tvb(off + 8, 4):uint(), tvb(off + 5, 1):uint(),
				tvb(off + 6, 1):uint())
		else
			e:add(F.ctl_dev, tvb(off + 5, 1))
			e:add(F.node_mac, tvb(off + 6, 6))
			e:add(F.ctl_ndev, tvb(off + 12, 1))
			if op == 6 then
				e:add(F.hello_paths, tvb(off + 13, 1))
				e:add(F.hello_ms, tvb(off + 14, 2))
			end
			e:add(F.node_name, tvb(off + 16, 15))
			if op == 6 then
				e:add(F.hello_queues, tvb(off + 31, 1))
			end
			if op == 14 then
				e:add(F.svc_ip, tvb(off + 32, 4))
				e:add(F.svc_prio, tvb(off + 36, 1))
				e:add(F.svc_holder, tvb(off + 37, 1))
				e:add(F.svc_mode, tvb(off + 38, 1))
				e:add(F.svc_bound, tvb(off + 39, 1))
			else
				e:add(F.groups, tvb(off + 32, 8))
			end
			info = info .. " node " .. tvb(off + 16, 15):stringz()
		end
		-- (every control opcode, after all the rest)
		e:add(F.node_ip6, tvb(off + 40, 16))
		off = off + 56
		if bit.band(flags, 0x200) ~= 0 and tvb:len() >= off + 32 then
			t:add(F.mac, tvb(off, 32))
			off = off + 32
		end
	end
	if bit.band(flags, 0x100) ~= 0 and tvb:len() >= off + 4 then
		t:add(F.crc, tvb(tvb:len() - 4, 4))
	end
	pinfo.cols.info = info
	return tvb:len()
end

DissectorTable.get("ethertype"):add(0x88B5, p)

-- A UDP node's frames (encap = udp): the same headers as the UDP payload,
-- at srnic's default UDP port (another udp_port: Decode As..., or
-- tshark -d udp.port==PORT,srnic_udp).  An IPv6 node's payload starts
-- with a 4-byte shim, its number on its path (what IPv4's identification
-- carries for an IPv4 node) and 2 bytes zero, then the base header.
local pu = Proto("srnic_udp", "srnic over UDP")
local FU = {
	seq = ProtoField.uint16("srnic_udp.seq", "Number on the path (IPv6 shim)"),
	reserved = ProtoField.bytes("srnic_udp.reserved", "Reserved"),
}
pu.fields = {FU.seq, FU.reserved}
local ip_version = Field.new("ip.version")
local ipv6_version = Field.new("ipv6.version")

-- Whether the datagram is in IPv6: its innermost IP header (the last
-- one the frame has, as in a tunnel or an ICMP error) is IPv6's.  (The
-- IPv6 dissector says ip.version too, at its own header's offset.)
local function in_ipv6()
	local v4, v6 = {ip_version()}, {ipv6_version()}
	if #v6 == 0 then return false end
	return #v4 == 0 or v6[#v6].offset >= v4[#v4].offset
end

function pu.dissector(tvb, pinfo, tree)
	if not in_ipv6() then return p.dissector(tvb, pinfo, tree) end
	if tvb:len() < 4 + 24 then return 0 end
	local t = tree:add(pu, tvb(0, 4), "srnic IPv6 shim")
	t:add(FU.seq, tvb(0, 2))
	t:add(FU.reserved, tvb(2, 2))
	return 4 + p.dissector(tvb(4):tvb(), pinfo, tree)
end
DissectorTable.get("udp.port"):add(4793, pu)
